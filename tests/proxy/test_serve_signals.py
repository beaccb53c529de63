"""``serve`` as an operator runs it: a real process, one worker and two, sent real signals.

It logs one start line; SIGTERM and SIGINT let a request in flight finish and exit 0;
SIGHUP reloads the rules (the request in flight finishes on the old ones, rules that do
not load are refused with their located errors and the old ones kept), and ``/readyz``
shows the hash of the rules each answer comes from.
"""

from __future__ import annotations

import json
import signal
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

    def __init__(self, args: list[str], port: int | None = None) -> None:
        self.port = free_port() if port is None else port
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [str(BIN), "serve", "--port", str(self.port), *args],
            stderr=subprocess.PIPE,
            text=True,
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

    def stop(self, sig: signal.Signals = signal.SIGTERM) -> int:
        self.proc.send_signal(sig)
        code = self.proc.wait(timeout=40)
        self._reader.join(timeout=5)
        return code


@contextmanager
def serving(args: list[str]) -> Iterator[Serve]:
    server = Serve(args)
    try:
        wait_healthy(server.url, server.proc)
        yield server
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()


def in_flight(url: str, upstream: FakeUpstream) -> tuple[threading.Thread, list[httpx.Response]]:
    """A request that is running upstream (the upstream has it, and holds its answer for
    ``upstream.script.delay``) when this returns and the test sends its signal."""
    answers: list[httpx.Response] = []
    seen = len(upstream.requests)
    thread = threading.Thread(
        target=lambda: answers.append(loopback.post(url + "/v1/messages", json=REQUEST, timeout=30))
    )
    thread.start()
    deadline = time.monotonic() + 20
    while len(upstream.requests) == seen:
        assert time.monotonic() < deadline, "the request never reached the upstream"
        time.sleep(0.02)
    return thread, answers


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
    assert [a.status_code for a in answers] == [200]
    assert "Traceback" not in "\n".join(server.lines)


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
        assert [a.status_code for a in answers] == [200]
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
