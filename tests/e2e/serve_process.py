"""``bridge-rules serve`` as a separate process on a free loopback port, for any test that
needs the real command (the e2e agents' tests and the hostile ones alike). It drives no agent,
so a test that uses it needs no ``e2e`` marker."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from tests.ports import free_port


class SetupError(RuntimeError):
    """What a test needs could not be set up (an agent install, a server that did not start)."""


@contextmanager
def serving(
    *options: str, log: Path | None = None, env: Mapping[str, str] | None = None
) -> Iterator[str]:
    """``bridge-rules serve OPTIONS`` as a separate process on a free port; yields its URL.
    With ``log``, its stderr (the access lines among it) goes to that file as it runs; ``env``
    is added to this process's environment for it.

    Its stderr always goes to a file, never to a pipe read only when it stops: a pipe holds
    64 KiB, some 200 access lines, and past that every worker blocks writing its next line,
    so a property that sends more requests (the deep profile's 1,500 paths) hung on its
    first request past the limit."""
    port = free_port()
    cli = Path(sys.executable).with_name("bridge-rules")
    args = [str(cli), "serve", *options, "--port", str(port)]
    extra = None if env is None else {**os.environ, **env}
    with log.open("w+") if log is not None else tempfile.TemporaryFile("w+") as sink:
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=sink, text=True, env=extra)
        try:
            _wait_healthy(proc, sink, f"http://127.0.0.1:{port}")
            yield f"http://127.0.0.1:{port}"
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _wait_healthy(proc: subprocess.Popen[str], said: IO[str], url: str) -> None:
    deadline = time.monotonic() + 30
    while True:
        if proc.poll() is not None:
            said.seek(0)
            raise SetupError(f"bridge-rules serve exited: {said.read()}")
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=1) as reply:
                if reply.status == 200:
                    return
        except OSError:
            if time.monotonic() > deadline:
                raise SetupError("bridge-rules serve did not answer /healthz") from None
            time.sleep(0.1)
