"""The debug log a profile names through the environment (``debug_log: {env: VAR}``),
honoured by every entry: ``Engine``, ``bridge-rules transform`` (a real process), the
peers' API, and ``serve`` (tests/proxy/test_debug_log_env.py). One module opens it
(:mod:`bridge_rules.debuglog`), so each entry writes the same record for the same request:
the oracle is the entries against one another, and the file's own mode and content.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import bridge_rules
from bridge_rules.compat import pi_anthropic_messages as pam

VAR = "PI_ANTHROPIC_MESSAGES_DEBUG_LOG"
PROMPT = "a prompt no log may hold"
REQUEST = {
    "model": "claude-sonnet-4-5",
    "system": [{"type": "text", "text": PROMPT}],
    "messages": [{"role": "user", "content": [{"type": "text", "text": PROMPT}]}],
    "tools": [{"name": n, "input_schema": {"type": "object"}} for n in ("read", "web_search")],
}
ANSWER = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5",
    "content": [
        {"type": "text", "text": PROMPT},
        {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "/a"}},
    ],
    "stop_reason": "tool_use",
}


def records(path: Path) -> list[dict[str, Any]]:
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    text = path.read_text(encoding="utf-8")
    assert PROMPT not in text
    return [json.loads(line) for line in text.splitlines()]


def cli(env: dict[str, str], *argv: str, stdin: bytes) -> bytes:
    done = subprocess.run(
        [str(Path(sys.executable).parent / "bridge-rules"), *argv],
        input=stdin,
        capture_output=True,
        env={**os.environ, **env},
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_engine_and_transform_and_the_peers_api_write_the_same_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    by_engine, by_cli, by_peer = (tmp_path / f"{n}.log" for n in ("engine", "cli", "peer"))
    engine = bridge_rules.load("pi-anthropic-messages")
    out = engine.outbound(REQUEST, env={VAR: str(by_engine)})
    monkeypatch.setenv(VAR, str(by_engine))
    engine.inbound(ANSWER, registered=out.registered)
    monkeypatch.delenv(VAR)
    pam.transform_payload(REQUEST, env={VAR: str(by_peer)})
    rules = ["--rules", "pi-anthropic-messages"]
    cli({VAR: str(by_cli)}, "transform", "outbound", *rules, stdin=json.dumps(REQUEST).encode())
    cli(
        {VAR: str(by_cli)},
        "transform", "inbound", *rules, "--registered", ",".join(out.registered),
        stdin=json.dumps(ANSWER).encode(),
    )  # fmt: skip
    outbound = {
        "event": "outbound",
        "before": records(by_engine)[0]["before"],
        "after": records(by_engine)[0]["after"],
        "name_map": {"read": "Read", "web_search": "mcp__pi__web_search"},
    }
    assert outbound["after"]["tools"][0]["name"] == "Read"
    assert outbound["before"]["tools"][0]["name"] == "read"
    inbound = {"event": "inbound_rename", "from": "Read", "to": "read"}
    assert records(by_engine) == records(by_cli) == [outbound, inbound]
    assert records(by_peer) == [outbound]


def test_a_stream_logs_its_renames_once_it_has_ended(tmp_path: Path) -> None:
    path = tmp_path / "stream.log"
    call = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}}
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {**ANSWER, "content": []}},
        {"type": "content_block_start", "index": 0, "content_block": call},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_stop"},
    ]
    body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()
    rules = ["--rules", "pi-anthropic-messages"]
    out = cli({VAR: str(path)}, "transform", "stream", *rules, "--registered", "read", stdin=body)
    assert b'"name":"read"' in out.replace(b" ", b"")
    assert records(path) == [{"event": "inbound_rename", "from": "Read", "to": "read"}]


def test_rules_that_declare_no_log_write_none(tmp_path: Path) -> None:
    path = tmp_path / "none.log"
    engine = bridge_rules.load("default")
    engine.outbound(REQUEST, env={VAR: str(path)})
    cli({VAR: str(path)}, "transform", "outbound", stdin=json.dumps(REQUEST).encode())
    assert not path.exists()
    assert engine.debug_log({VAR: str(path)}) is None
    assert bridge_rules.load("pi-anthropic-messages").debug_log({VAR: ""}) is None
