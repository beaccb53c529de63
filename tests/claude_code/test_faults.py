"""What ``--upstream claude-code`` does when things go wrong, and what it never does: run a
tool on the proxy's host, leave a CLI process behind, or keep a client waiting."""

from __future__ import annotations

import json
import logging
import os
import re
import stat
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest
from fake_upstream import Script
from scripted import ScriptedEndpoint, calls, done, serving
from servers import access_lines

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("claude-code")]
ASK = {
    "model": "claude-sonnet-4-6",
    "max_tokens": 512,
    "messages": [{"role": "user", "content": "go"}],
    "tools": [
        {"name": n, "description": n, "input_schema": {"type": "object"}}
        for n in ("Bash", "Read", "WebFetch", "Glob", "Grep", "mcp__pi__ls")
    ],
}


def cli_processes() -> list[str]:
    """This test process's children (the proxy runs in it) whose HOME is one of the
    upstream's scratch directories, as ``pid: command``."""
    home = f"HOME={tempfile.gettempdir()}/bridge-rules-claude-".encode()
    found = []
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                if int(f.read().rsplit(b")", 1)[1].split()[1]) != os.getpid():
                    continue
            with open(f"/proc/{pid}/environ", "rb") as f:
                if home not in f.read():
                    continue
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                found.append(f"{pid}: {f.read()[:80]!r}")
        except (OSError, ValueError, IndexError):
            continue
    return found


def litter() -> set[str]:
    """What the upstream's CLI runs left: scratch directories in the temporary directory,
    or the CLI's own per-directory files in the system's (it names them after its working
    directory, every character but letters and digits made a dash)."""
    tmp = Path(tempfile.gettempdir())
    found = {p.name for p in tmp.glob("bridge-rules-claude-*")}
    ours = re.sub(r"[^A-Za-z0-9]", "-", str(tmp))
    return found | {p.name for p in Path("/tmp").glob(f"claude-*/{ours}-bridge-rules-claude-*")}


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary directory of this test's own for the in-process proxy, so a scratch
    directory that another test's proxy (another xdist worker) makes or removes meanwhile
    is not counted as this one's."""
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    return root


def fake_cli(tmp_path: Path, body: str) -> str:
    path = tmp_path / "claude"
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


class _Hits(BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.hits.append(self.path)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def test_no_builtin_runs_on_the_proxy_host(
    tmp_path: Path,
    private_tmp: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    fifo = tmp_path / "canary.fifo"  # opening it for reading is what a Read would do
    os.mkfifo(fifo)
    opened = threading.Event()
    watcher = threading.Thread(target=lambda: (open(fifo, "wb").close(), opened.set()), daemon=True)
    watcher.start()
    site = ThreadingHTTPServer(("127.0.0.1", 0), _Hits)
    threading.Thread(target=site.serve_forever, daemon=True).start()
    touched = tmp_path / "touched"
    url = f"http://127.0.0.1:{site.server_address[1]}/canary"
    endpoint = ScriptedEndpoint(
        [
            calls(
                ("Bash", {"command": f"touch {touched}"}),
                ("Read", {"file_path": str(fifo)}),
                ("WebFetch", {"url": url, "prompt": "read it"}),
                ("Glob", {"pattern": "*"}),  # read-only in its own directory: run unasked
                ("Grep", {"pattern": "x"}),
                ("mcp__pi__ls", {"path": "/"}),
            ),
            done("the CLI must not call the model again"),
        ]
    )
    caplog.set_level(logging.INFO, "bridge_rules.proxy")
    before = litter()
    with endpoint, serving(endpoint, monkeypatch) as proxy:
        reply = httpx.post(f"{proxy}/v1/messages", json=ASK, timeout=60).json()
        time.sleep(0.3)
        turns = len(endpoint.turns)
    denied = sorted(
        r.getMessage().split()[2] for r in caplog.records if "claude-code: denied" in r.getMessage()
    )
    assert reply["stop_reason"] == "tool_use"
    proposed = ["Bash", "Read", "WebFetch", "Glob", "Grep", "mcp__pi__ls"]
    assert [b["name"] for b in reply["content"] if b["type"] == "tool_use"] == proposed
    assert denied == sorted(proposed)  # every one stopped before it ran, Glob and Grep too
    (access,) = access_lines(caplog, 1)
    assert access["status"] == 200
    assert access["upstream_status"] == 200
    assert 0 < access["upstream_ms"] < access["ms"]  # the CLI's start and first event
    assert turns == 1
    assert not touched.exists()
    assert not opened.is_set()
    assert _Hits.hits == []
    assert cli_processes() == []
    assert litter() == before  # its scratch directory is gone, and nothing else was left
    with open(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK), "rb"):  # lets the watcher go
        pass
    site.shutdown()


@pytest.mark.parametrize(
    ("script", "status", "says"),
    [
        ("echo 'this is not json'; sleep 5", 502, "not JSON"),
        ("echo boom >&2; exit 3", 502, "the Claude Code CLI"),
    ],
    ids=["malformed", "crash"],
)
def test_a_broken_cli_gets_a_clear_502(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: str, status: int, says: str
) -> None:
    with (
        ScriptedEndpoint([done()]) as endpoint,
        serving(endpoint, monkeypatch, claude_path=fake_cli(tmp_path, script)) as proxy,
    ):
        started = time.monotonic()
        reply = httpx.post(f"{proxy}/v1/messages", json=ASK, timeout=30)
    assert reply.status_code == status
    assert says in reply.json()["error"]["message"]
    assert time.monotonic() - started < 10
    assert cli_processes() == []


@pytest.mark.parametrize(
    ("status", "expected", "says"),
    [(401, 502, "the model endpoint answered 401"), (429, 429, "answered 429")],
)
def test_a_failing_model_endpoint_fails_the_request_at_once(
    monkeypatch: pytest.MonkeyPatch, status: int, expected: int, says: str
) -> None:
    error = {"type": "error", "error": {"type": "x", "message": "no"}}
    failing = Script(status=status, error_body=json.dumps(error).encode())
    with ScriptedEndpoint([failing]) as endpoint, serving(endpoint, monkeypatch) as proxy:
        started = time.monotonic()
        reply = httpx.post(f"{proxy}/v1/messages", json=ASK, timeout=60)
    assert reply.status_code == expected
    assert says in reply.json()["error"]["message"]
    assert time.monotonic() - started < 10  # no back-off inside the CLI
    assert len(endpoint.turns) == 1


def test_a_missing_cli_gets_503(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with (
        ScriptedEndpoint([done()]) as endpoint,
        serving(endpoint, monkeypatch, claude_path=str(tmp_path / "nope")) as proxy,
    ):
        reply = httpx.post(f"{proxy}/v1/messages", json=ASK, timeout=30)
    assert reply.status_code == 503
    assert "not found" in reply.json()["error"]["message"]


def test_a_silent_cli_is_ended_by_the_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli = fake_cli(tmp_path, "exec sleep 60")
    with (
        ScriptedEndpoint([done()]) as endpoint,
        serving(endpoint, monkeypatch, claude_path=cli, timeout=1.0) as proxy,
    ):
        started = time.monotonic()
        reply = httpx.post(f"{proxy}/v1/messages", json=ASK, timeout=30)
    assert reply.status_code == 504
    assert time.monotonic() - started < 5
    assert cli_processes() == []


def test_sessions_over_the_cap_get_429(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cli = fake_cli(tmp_path, "exec sleep 60")
    with (
        ScriptedEndpoint([done()]) as endpoint,
        serving(endpoint, monkeypatch, claude_path=cli, timeout=1.5, max_sessions=1) as proxy,
    ):
        first = threading.Thread(
            target=lambda: httpx.post(f"{proxy}/v1/messages", json=ASK, timeout=30)
        )
        first.start()
        deadline = time.monotonic() + 5
        while not cli_processes() and time.monotonic() < deadline:
            time.sleep(0.02)
        second = httpx.post(f"{proxy}/v1/messages", json=ASK, timeout=30)
        first.join()
    assert second.status_code == 429
    assert second.headers["retry-after"] == "1"
    assert cli_processes() == []


def test_a_client_that_leaves_ends_its_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    slow = calls(("Bash", {"command": "true"}))
    slow.event_gap = 0.3  # a stream that takes a few seconds
    before = cli_processes()
    # No spares: the request's own CLI is the one to end (test_spares.py has theirs).
    with (
        ScriptedEndpoint([slow]) as endpoint,
        serving(endpoint, monkeypatch, claude_spares=0) as proxy,
    ):
        with httpx.stream(
            "POST", f"{proxy}/v1/messages", json={**ASK, "stream": True}, timeout=30
        ) as r:
            chunks = r.iter_bytes()  # kept: a dropped iterator closes the response
            next(chunks)
            running = cli_processes()
        deadline = time.monotonic() + 10
        while cli_processes() and time.monotonic() < deadline:
            time.sleep(0.05)
        left = cli_processes()
    assert before == []
    assert running != []
    assert left == []
