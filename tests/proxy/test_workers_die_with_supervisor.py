"""``serve --workers N`` leaves nothing behind when its supervisor is killed outright.

The oracle is /proc: the worker processes whose parent was the supervisor must be gone a
few seconds after the supervisor gets SIGKILL (no handler of ours runs then). uvicorn's
workers do not watch their parent, so before ``proxy.parentdeath`` they went on serving."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from tests.ports import free_port

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def children(pid: int) -> set[int]:
    found = set()
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.add(int(entry))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_sigkill_of_the_supervisor_ends_every_worker() -> None:
    port = free_port()
    cli = Path(sys.executable).with_name("bridge-rules")
    args = [str(cli), "serve", "--upstream", "http://127.0.0.1:9", "--workers", "2"]
    proc = subprocess.Popen(
        [*args, "--port", str(port), "--drain-timeout", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        workers: set[int] = set()
        while len(workers) < 2:  # both workers started and one answers
            assert proc.poll() is None, "serve exited"
            assert time.monotonic() < deadline, "serve did not start two workers"
            workers = {p for p in children(proc.pid) if b"spawn_main" in _cmdline(p)}
            time.sleep(0.2)
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1):
                    break
            except OSError:
                assert time.monotonic() < deadline, "serve did not answer /healthz"
                time.sleep(0.2)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        until = time.monotonic() + 10
        while any(alive(p) for p in workers) and time.monotonic() < until:
            time.sleep(0.1)
        assert [p for p in workers if alive(p)] == [], "workers outlived their supervisor"
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in children(proc.pid):
            os.kill(pid, signal.SIGKILL)


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""
