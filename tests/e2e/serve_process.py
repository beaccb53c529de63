"""``bridge-rules serve`` as a separate process on a free loopback port, for any test that
needs the real command (the e2e agents' tests and the hostile ones alike). It drives no agent,
so a test that uses it needs no ``e2e`` marker."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.ports import free_port


class SetupError(RuntimeError):
    """What a test needs could not be set up (an agent install, a server that did not start)."""


@contextmanager
def serving(*options: str, log: Path | None = None) -> Iterator[str]:
    """``bridge-rules serve OPTIONS`` as a separate process on a free port; yields its URL.
    With ``log``, its stderr (the access lines among it) goes to that file as it runs."""
    port = free_port()
    cli = Path(sys.executable).with_name("bridge-rules")
    args = [str(cli), "serve", *options, "--port", str(port)]
    sink = None if log is None else log.open("w")
    err = subprocess.PIPE if sink is None else sink
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=err, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            if proc.poll() is not None:
                said = log.read_text() if log else proc.stderr.read() if proc.stderr else ""
                raise SetupError(f"bridge-rules serve exited: {said}")
            try:
                with urllib.request.urlopen(f"{url}/healthz", timeout=1) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                if time.monotonic() > deadline:
                    raise SetupError("bridge-rules serve did not answer /healthz") from None
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        try:
            proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
        if sink is not None:
            sink.close()
