"""``bridge-rules serve`` as a separate process on a free loopback port, for any test that
needs the real command (the e2e agents' tests and the hostile ones alike). It drives no agent,
so a test that uses it needs no ``e2e`` marker."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

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
    # Its output goes to files, never to a pipe nobody reads while it runs: a pipe holds
    # 64 KiB, and some 200 access lines in (a deep hypothesis run) the server blocked on
    # its next log write and stopped answering.
    with (
        tempfile.TemporaryFile("w+") as out,
        log.open("w+") if log is not None else tempfile.TemporaryFile("w+") as sink,
    ):
        proc = subprocess.Popen(args, stdout=out, stderr=sink, text=True)
        try:
            yield _answering(proc, f"http://127.0.0.1:{port}", sink)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _answering(proc: subprocess.Popen[str], url: str, stderr: IO[str]) -> str:
    """``url`` once the server answers ``/healthz``; SetupError with what it said if not."""
    deadline = time.monotonic() + 30
    while True:
        if proc.poll() is not None:
            stderr.seek(0)
            raise SetupError(f"bridge-rules serve exited: {stderr.read()}")
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=1) as reply:
                if reply.status == 200:
                    return url
        except OSError:
            if time.monotonic() > deadline:
                raise SetupError("bridge-rules serve did not answer /healthz") from None
            time.sleep(0.1)
