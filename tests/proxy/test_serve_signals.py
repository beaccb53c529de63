"""``serve`` as an operator runs it: a real process, one worker and two, sent real signals.

It logs one start line; SIGTERM and SIGINT let a request in flight finish and exit 0,
whichever process gets them and in whatever order (a terminal's Ctrl-C reaches every
worker as well as the supervisor, which passes a stop on; uvicorn's server took a SIGINT
after another stop signal as "quit now"); a second SIGINT is "quit now". SIGHUP reloads
the rules (the request in flight finishes on the old ones, rules that do not load are
refused with their located errors and the old ones kept), and ``/readyz`` shows the hash
of the rules each answer comes from.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from fake_upstream import FakeUpstream
from tests.ports import free_port
from tests.proxy import loopback
from tests.proxy.test_proxy_cli import BIN, wait_healthy
from tests.proxy.test_workers_die_with_supervisor import _cmdline, children

RULES = (
    "bridge-rules: 1\nextends: default\nnames:\n  - kind: aliases\n    id: companions\n"
    "    map: {search_docs: %s}\n"
)
REQUEST = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 10,
    "messages": [{"role": "user", "content": "hi"}],
    "tools": [{"name": "search_docs", "input_schema": {"type": "object"}}],
}


class Serve:
    """A running ``bridge-rules serve`` whose stderr is read as it comes."""

    def __init__(self, args: list[str], port: int | None = None, group: bool = False) -> None:
        self.port = free_port() if port is None else port
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [str(BIN), "serve", "--port", str(self.port), *args],
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=group,  # a process group of its own, as a terminal gives it
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))

    def events(self, name: str) -> list[dict[str, Any]]:
        found = [json.loads(line) for line in list(self.lines) if line.startswith('{"event"')]
        return [e for e in found if e["event"] == name]

    def wait_for(self, name: str, count: int = 1, timeout: float = 30) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while len(self.events(name)) < count:
            assert self.proc.poll() is None, "\n".join(self.lines)
            assert time.monotonic() < deadline, f"no {name} event: " + "\n".join(self.lines)
            time.sleep(0.05)
        return self.events(name)[count - 1]

    def ready_hashes(self, tries: int = 6) -> set[str]:
        """The rules hash that ``/readyz`` shows, over several connections (any worker)."""
        return {loopback.get(self.url + "/readyz").json()["rules_hash"] for _ in range(tries)}

    def workers(self, count: int) -> set[int]:
        """The ``count`` worker processes, once each has its signal handlers (it catches
        SIGHUP from the moment its app is built: ``/proc``'s SigCgt says so)."""
        deadline = time.monotonic() + 30
        while True:
            found = {p for p in children(self.proc.pid) if b"spawn_main" in _cmdline(p)}
            if len(found) == count and all(catches(p, signal.SIGHUP) for p in found):
                return found
            assert time.monotonic() < deadline, f"workers never ready: {found}"
            time.sleep(0.05)

    def refusing(self, timeout: float = 20) -> None:
        """Wait until the port refuses connections: the drain has begun everywhere."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
            except ConnectionRefusedError:
                return
            assert time.monotonic() < deadline, "serve still accepts connections"
            time.sleep(0.02)

    def stop(self, sig: signal.Signals = signal.SIGTERM) -> int:
        self.proc.send_signal(sig)
        code = self.proc.wait(timeout=40)
        self._reader.join(timeout=5)
        return code


def catches(pid: int, sig: signal.Signals) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = next(line for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(caught.split()[1], 16) >> (sig - 1) & 1)


def listening_inode(port: int) -> str:
    """The inode of the socket listening on ``port`` (``/proc/net/tcp``)."""
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[1].endswith(f":{port:04X}") and fields[3] == "0A":  # 0A: LISTEN
            return fields[9]
    raise AssertionError(f"nothing listens on {port}")


def open_files(pid: int) -> set[str]:
    found = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            found.add(os.readlink(fd))
        except OSError:
            continue
    return found


@contextmanager
def serving(args: list[str], group: bool = False) -> Iterator[Serve]:
    server = Serve(args, group=group)
    try:
        wait_healthy(server.url, server.proc)
        yield server
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()


def in_flight(
    url: str, upstream: FakeUpstream
) -> tuple[threading.Thread, list[httpx.Response | httpx.TransportError]]:
    """A request that is running upstream (the upstream has it, and holds its answer for
    ``upstream.script.delay``) when this returns and the test sends its signal. Its
    outcome: the answer, or the transport error of a connection cut."""
    answers: list[httpx.Response | httpx.TransportError] = []
    seen = len(upstream.requests)

    def send() -> None:
        try:
            answers.append(loopback.post(url + "/v1/messages", json=REQUEST, timeout=30))
        except httpx.TransportError as exc:
            answers.append(exc)

    thread = threading.Thread(target=send)
    thread.start()
    deadline = time.monotonic() + 20
    while len(upstream.requests) == seen:
        assert time.monotonic() < deadline, "the request never reached the upstream"
        time.sleep(0.02)
    return thread, answers


def statuses(answers: list[httpx.Response | httpx.TransportError]) -> list[int | str]:
    return [a.status_code if isinstance(a, httpx.Response) else repr(a) for a in answers]


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_start_line_and_a_drained_stop(
    upstream: FakeUpstream, tmp_path: Path, workers: int, sig: signal.Signals
) -> None:
    rules = tmp_path / "mine.bridge-rules.yaml"
    rules.write_text(RULES % "mcp__docs__search", encoding="utf-8")
    args = ["--upstream", upstream.url, "--rules", str(rules), "--workers", str(workers)]
    with serving(args) as server:
        start = server.wait_for("serve.start")
        assert start == {
            "event": "serve.start",
            "listen": server.url,
            "rules": [str(rules)],
            "rules_hash": start["rules_hash"],
            "upstream": upstream.url,
            "workers": workers,
        }
        assert server.ready_hashes() == {start["rules_hash"]}
        assert len(server.events("serve.start")) == 1
        upstream.script.delay = 1.5
        thread, answers = in_flight(server.url, upstream)
        code = server.stop(sig)
        thread.join(timeout=30)
    assert code == 0, "\n".join(server.lines)
    assert statuses(answers) == [200], "\n".join(server.lines)
    assert "Traceback" not in "\n".join(server.lines)


@pytest.mark.parametrize("workers", [1, 2])
def test_ctrl_c_at_a_terminal_drains(upstream: FakeUpstream, workers: int) -> None:
    """A terminal's Ctrl-C is SIGINT to the whole process group: each worker gets it from
    the terminal and a stop from the supervisor, in either order, and still drains."""
    args = ["--upstream", upstream.url, "--workers", str(workers)]
    with serving(args, group=True) as server:
        if workers > 1:
            server.workers(workers)
        upstream.script.delay = 1.5
        thread, answers = in_flight(server.url, upstream)
        os.killpg(server.proc.pid, signal.SIGINT)
        code = server.proc.wait(timeout=40)
        thread.join(timeout=30)
    assert code == 0, "\n".join(server.lines)
    assert statuses(answers) == [200], "\n".join(server.lines)
    assert "Traceback" not in "\n".join(server.lines)


def test_a_worker_stopped_twice_still_drains(upstream: FakeUpstream) -> None:
    """SIGTERM then SIGINT to the worker itself: uvicorn's server took that SIGINT as
    "quit now" and cut the request in flight (what a terminal's Ctrl-C arriving after the
    supervisor's stop did, one run in ten)."""
    args = ["--upstream", upstream.url, "--workers", "2"]
    with serving(args) as server:
        workers = server.workers(2)
        upstream.script.delay = 1.5
        thread, answers = in_flight(server.url, upstream)
        listener = listening_inode(server.port)
        for pid in workers:
            os.kill(pid, signal.SIGTERM)
        for pid in workers:  # its SIGTERM handled: it has closed the listening socket
            deadline = time.monotonic() + 20
            while f"socket:[{listener}]" in open_files(pid):
                assert time.monotonic() < deadline, f"worker {pid} never began its drain"
                time.sleep(0.02)
            os.kill(pid, signal.SIGINT)
        thread.join(timeout=30)
        assert statuses(answers) == [200], "\n".join(server.lines)
        code = server.stop()
    assert code == 0, "\n".join(server.lines)
    assert "Traceback" not in "\n".join(server.lines)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_second_sigint_quits_at_once(upstream: FakeUpstream, workers: int) -> None:
    """Ctrl-C twice: the request in flight is cut rather than waited for."""
    args = ["--upstream", upstream.url, "--workers", str(workers)]
    with serving(args) as server:
        upstream.script.delay = 25.0
        thread, answers = in_flight(server.url, upstream)
        started = time.monotonic()
        server.proc.send_signal(signal.SIGINT)
        server.refusing()
        code = server.stop(signal.SIGINT)
        took = time.monotonic() - started
        thread.join(timeout=30)
    assert took < 15, f"a second SIGINT still waited {took:.1f} s"
    assert statuses(answers) != [200], "the request in flight was answered, not cut"
    assert code == 0, "\n".join(server.lines)


@pytest.mark.parametrize("workers", [1, 2])
def test_sighup_reloads_the_rules_and_keeps_them_when_new_ones_fail(
    upstream: FakeUpstream, tmp_path: Path, workers: int
) -> None:
    rules = tmp_path / "mine.bridge-rules.yaml"
    rules.write_text(RULES % "mcp__docs__search", encoding="utf-8")
    upstream.script.tool_calls = [{"name": "mcp__docs__search", "input": {}}]
    args = ["--upstream", upstream.url, "--rules", str(rules), "--workers", str(workers)]
    with serving(args) as server:
        old = server.wait_for("serve.start")["rules_hash"]
        upstream.script.delay = 1.5
        thread, answers = in_flight(server.url, upstream)
        rules.write_text(RULES % "mcp__docs__find", encoding="utf-8")
        server.proc.send_signal(signal.SIGHUP)
        reloaded = server.wait_for("serve.reload")
        thread.join(timeout=30)
        # The request in flight went out and came back under the old rules.
        assert statuses(answers) == [200]
        assert isinstance(answers[0], httpx.Response)
        assert answers[0].json()["content"][0]["name"] == "search_docs"
        assert upstream.requests[0].json["tools"][0]["name"] == "mcp__docs__search"
        assert reloaded["previous"] == old
        new = reloaded["rules_hash"]
        assert new != old
        assert server.ready_hashes() == {new}
        upstream.script.delay = 0.0
        assert loopback.post(server.url + "/v1/messages", json=REQUEST).status_code == 200
        assert upstream.requests[-1].json["tools"][0]["name"] == "mcp__docs__find"

        rules.write_text(RULES.replace("map:", "mapp:") % "mcp__docs__x", encoding="utf-8")
        server.proc.send_signal(signal.SIGHUP)
        failed = server.wait_for("serve.reload_failed")
        assert failed["kept_rules_hash"] == new
        assert any("error[BR102] unknown key 'mapp'" in e for e in failed["errors"])
        assert any(e.startswith(f"{rules}:6:5: ") for e in failed["errors"])
        assert server.ready_hashes() == {new}
        assert loopback.post(server.url + "/v1/messages", json=REQUEST).status_code == 200
        assert upstream.requests[-1].json["tools"][0]["name"] == "mcp__docs__find"
        code = server.stop()
    assert code == 0
    assert "Traceback" not in "\n".join(server.lines)


@pytest.mark.parametrize("workers", [1, 2])
def test_port_0_listens_where_the_start_line_says(upstream: FakeUpstream, workers: int) -> None:
    server = Serve(["--upstream", upstream.url, "--workers", str(workers)], port=0)
    try:
        start = server.wait_for("serve.start")
        url = start["listen"]
        assert url.startswith("http://127.0.0.1:")
        assert not url.endswith(":0")
        assert loopback.get(url + "/healthz").status_code == 200
        assert loopback.post(url + "/v1/messages", json=REQUEST).status_code == 200
        code = server.stop()
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()
    assert code == 0, "\n".join(server.lines)
