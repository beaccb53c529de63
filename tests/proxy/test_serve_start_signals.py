"""Ctrl-C while ``serve --workers N`` starts: heard, and no worker dies with a traceback.

A terminal's Ctrl-C is SIGINT to the whole process group, so it reaches a worker still
starting (Python running ``spawn_main``, before uvicorn's handlers): that worker used to
stop with a KeyboardInterrupt traceback. Workers now start with SIGINT ignored until
their drain handler is in place, and the start line comes once they are launched, so a
Ctrl-C after it is never lost in the supervisor's start. The oracle for "starting" is
``/proc``: the process runs ``spawn_main`` and does not yet catch SIGTERM (uvicorn's
server does, from the moment it starts serving).
"""

from __future__ import annotations

import os
import signal
import sys
import time

import pytest
from fake_upstream import FakeUpstream
from tests.proxy.test_serve_signals import Serve, catches, serving
from tests.proxy.test_workers_die_with_supervisor import _cmdline, children

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def test_ctrl_c_right_after_the_start_line_stops_serve(upstream: FakeUpstream) -> None:
    for _ in range(3):
        with serving(["--upstream", upstream.url, "--workers", "2"], group=True) as server:
            server.wait_for("serve.start")
            os.killpg(server.proc.pid, signal.SIGINT)
            code = server.proc.wait(timeout=40)
        assert code == 0, "\n".join(server.lines)
        assert "Traceback" not in "\n".join(server.lines)


def test_a_worker_told_ctrl_c_while_it_starts_goes_on(upstream: FakeUpstream) -> None:
    """SIGINT to each worker while Python is starting it: ignored, not a traceback; the
    workers then serve and a Ctrl-C to the group drains as ever."""
    server = Serve(["--upstream", upstream.url, "--workers", "2"], group=True)
    try:  # not ``serving``, which waits until a worker answers
        told: set[int] = set()  # told while Python ran and uvicorn did not serve yet
        raced: set[int] = set()  # uvicorn's handler came first: a drain, not this case
        deadline = time.monotonic() + 30
        while len(told) < 2:
            assert time.monotonic() < deadline, f"no starting worker caught: {told}"
            for pid in children(server.proc.pid) - told - raced:
                if b"spawn_main" in _cmdline(pid) and not catches(pid, signal.SIGTERM):
                    os.kill(pid, signal.SIGINT)
                    (raced if catches(pid, signal.SIGTERM) else told).add(pid)
            time.sleep(0.005)
        ready = server.workers(2)
        assert ready == told, "\n".join(server.lines)
        os.killpg(server.proc.pid, signal.SIGINT)
        code = server.proc.wait(timeout=40)
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()
    assert code == 0, "\n".join(server.lines)
    assert "Traceback" not in "\n".join(server.lines)
