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
def serving(*options: str) -> Iterator[str]:
    """``bridge-rules serve OPTIONS`` as a separate process on a free port; yields its URL."""
    port = free_port()
    cli = Path(sys.executable).with_name("bridge-rules")
    args = [str(cli), "serve", *options, "--port", str(port)]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            if proc.poll() is not None:
                raise SetupError(
                    f"bridge-rules serve exited: {proc.stderr.read() if proc.stderr else ''}"
                )
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
