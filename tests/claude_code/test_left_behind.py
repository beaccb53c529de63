"""Nothing left behind: a worker, or the whole ``serve --workers 2``, killed with SIGKILL
mid-stream takes its Claude Code CLI processes with it (the launcher in
proxy/claude_code/sandbox.py). The oracle is /proc: every process whose environment has one
of this serve's scratch directories as HOME, whoever its parent now is."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from scripted import ScriptedEndpoint, calls
from tests.ports import free_port

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("claude-code")]
ASK = {
    "model": "claude-sonnet-4-6",
    "max_tokens": 512,
    "stream": True,
    "messages": [{"role": "user", "content": "go"}],
    "tools": [{"name": "Bash", "description": "run", "input_schema": {"type": "object"}}],
}


def left(tmp: Path) -> dict[int, int]:
    """Processes (any parent) whose HOME is a scratch directory under ``tmp``: pid -> ppid."""
    home = f"HOME={tmp}/bridge-rules-claude-".encode()
    found = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if home not in f.read():
                    continue
            with open(f"/proc/{pid}/stat", "rb") as f:
                found[int(pid)] = int(f.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    return found


def gone_within(tmp: Path, seconds: float) -> dict[int, int]:
    deadline = time.monotonic() + seconds
    while (found := left(tmp)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return found


def healthy(url: str) -> None:
    """Once ``serve`` at ``url`` answers (a minute at most)."""
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            assert time.monotonic() < deadline, "serve did not start"
            time.sleep(0.2)


def streaming(url: str) -> threading.Thread:
    """A streaming request in the background, whose connection the kill will cut."""

    def run() -> None:
        try:
            with httpx.stream("POST", f"{url}/v1/messages", json=ASK, timeout=60) as reply:
                for _ in reply.iter_bytes():
                    pass
        except httpx.HTTPError:
            pass

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def running_cli(tmp: Path) -> dict[int, int]:
    """Once the CLI runs (for the real one: once the command it runs does)."""
    deadline = time.monotonic() + 30
    while not (found := left(tmp)) or not any(busy(pid) for pid in found):
        assert time.monotonic() < deadline, found
        time.sleep(0.05)
    return found


def busy(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().startswith((b"tail", b"sleep"))
    except OSError:
        return False


def hung_cli(tmp_path: Path) -> list[str]:
    """A CLI that reads nothing and never ends: the pipes closing does not stop it."""
    path = tmp_path / "claude"
    path.write_text("#!/bin/sh\nexec sleep 600\n")
    path.chmod(0o755)
    return ["--claude-path", str(path)]


# The real CLI running a command of its own (--claude-allow Bash): the command outlives the
# CLI unless its process group goes too; and a CLI that ignores the end of its input.
CASES = {"real CLI, Bash running": lambda _: ["--claude-allow", "Bash"], "hung CLI": hung_cli}


@pytest.mark.parametrize("case", CASES)
def test_sigkill_of_a_worker_and_of_the_whole_proxy_leaves_no_cli(
    tmp_path: Path, case: str
) -> None:
    slow = calls(("Bash", {"command": "timeout 60 tail -f /dev/null"}))
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with ScriptedEndpoint([slow]) as endpoint:
        env = {
            **os.environ,
            "TMPDIR": str(tmp),
            "ANTHROPIC_BASE_URL": endpoint.url,
            "ANTHROPIC_API_KEY": "sk-ant-test",
        }
        serve = [str(Path(sys.executable).with_name("bridge-rules")), "serve"]
        proc = subprocess.Popen(
            [
                *serve,
                "--upstream",
                "claude-code",
                "--workers",
                "2",
                "--port",
                str(port),
                *CASES[case](tmp_path),
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            healthy(url)
            streaming(url)
            found = running_cli(tmp)
            workers = {ppid for ppid in found.values() if ppid not in found} - {1}
            assert len(workers) == 1, found  # the launcher's parent: the worker answering
            os.kill(workers.pop(), signal.SIGKILL)
            assert gone_within(tmp, 5) == {}

            streaming(url)  # the other worker (or the one the supervisor started again)
            running_cli(tmp)
            os.killpg(proc.pid, signal.SIGKILL)  # the supervisor and every worker at once
            assert gone_within(tmp, 5) == {}
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
            for pid in left(tmp):  # never leave one behind, whatever the test found
                os.kill(pid, signal.SIGKILL)
