"""The `pi-flows` profile reproduces the PR "fix: architect subagent tool dispatch failures on
Anthropic/proxy providers" (ChicK00o/pi-flows, BlackBeltTechnology/pi-flows#9), scenario by
scenario: the architect's `agent_write`, `flow_write` and `finish` written as `<tool_call>`
text (fix 7, including the `max_tokens` cut and nested JSON, the PR's last commit), names
compared after one `mcp__<server>__` is stripped (fix 8), `find`/`ls` as core names (fix 10).
"""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest

import bridge_rules
from bridge_rules.engine import Engine

ARCHITECT = ["read", "find", "ls", "agent_write", "flow_write", "finish"]
"""The architect subagent's tools: pi built-ins and the flow engine's own."""

FINISH = {
    "summary": "Created the review flow",
    "files": [{"path": ".pi/flows/review.yaml"}, {"path": ".pi/agents/reviewer.md"}],
}


@pytest.fixture(scope="module")
def flows() -> Engine:
    return bridge_rules.load("pi-flows")


def message(text: str, stop: str) -> dict[str, Any]:
    return {
        "id": "msg_arch",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "stop_reason": stop,
    }


def tag(name: str, arguments: dict[str, Any]) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


def calls(out: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(b["name"], b["input"]) for b in out["content"] if b["type"] == "tool_use"]


# --- fix 10: find and ls are core names, never prefixed ------------------------
@pytest.mark.parametrize(
    ("local", "wire"),
    [
        ("find", "find"),
        ("ls", "ls"),
        ("LS", "LS"),
        ("read", "read"),
        ("agent_write", "mcp__flows__agent_write"),
        ("finish", "mcp__flows__finish"),
    ],
)
def test_find_and_ls_stay_core_names(flows: Engine, local: str, wire: str) -> None:
    assert flows.outbound_name(local) == wire


def test_the_architect_request_sends_find_and_ls_plain(flows: Engine) -> None:
    payload = {
        "model": "claude-sonnet-4-5",
        "tools": [{"name": n, "input_schema": {"type": "object"}} for n in ARCHITECT],
        "messages": [{"role": "user", "content": "make a review flow"}],
    }
    result = flows.outbound(payload, env={})
    assert [t["name"] for t in result.payload["tools"]] == [
        "read",
        "find",
        "ls",
        "mcp__flows__agent_write",
        "mcp__flows__flow_write",
        "mcp__flows__finish",
    ]
    assert result.registered == ARCHITECT


# --- fix 7: <tool_call> text recovered as real calls --------------------------
def test_architect_calls_written_as_text_are_recovered(flows: Engine) -> None:
    """The PR's problem: no callable tools reached the model, so it wrote the calls as text."""
    text = (
        "I'll create the agent and the flow.\n"
        + tag("agent_write", {"path": "reviewer", "content": "---\nname: reviewer\n---\n"})
        + "\n"
        + tag("flow_write", {"path": ".pi/flows/review.yaml", "content": "steps: []\n"})
    )
    out = flows.inbound(message(text, "end_turn"), ARCHITECT)
    assert out["content"][0] == {"type": "text", "text": "I'll create the agent and the flow.\n"}
    assert [name for name, _ in calls(out)] == ["agent_write", "flow_write"]
    assert out["stop_reason"] == "tool_use"


@pytest.mark.parametrize("closed", [True, False], ids=["closed", "cut-before-closing-tag"])
def test_finish_after_max_tokens_is_recovered_with_nested_json(flows: Engine, closed: bool) -> None:
    """Fix 7 and the last commit: `finish` arrives as text when max_tokens cuts the turn, and
    its `files: [{path: ...}]` nests braces that a lazy `{...}` match would have cut short."""
    body = tag("finish", FINISH)
    text = "Done. Summary follows.\n" + (body if closed else body[: -len("</tool_call>")])
    out = flows.inbound(message(text, "max_tokens"), ARCHITECT)
    assert calls(out) == [("finish", FINISH)]
    assert out["stop_reason"] == "tool_use"


@pytest.mark.parametrize(
    ("name", "recovered"),
    [
        ("finish", "finish"),
        ("mcp__pi__finish", "finish"),  # the pi-anthropic-messages adapter's wire name
        ("mcp__flows__finish", "finish"),  # the prefix era's own
        ("mcp__my_server__finish", None),  # the server segment may not hold `_`
        ("Finish", None),  # compared case-sensitively
    ],
)
def test_recovered_names_are_compared_prefix_stripped(
    flows: Engine, name: str, recovered: str | None
) -> None:
    out = flows.inbound(message(tag(name, FINISH), "max_tokens"), ARCHITECT)
    if recovered is None:
        assert out["content"] == [{"type": "text", "text": tag(name, FINISH)}]
        assert out["stop_reason"] == "max_tokens"
    else:
        assert calls(out) == [(recovered, FINISH)]


@pytest.mark.parametrize(
    ("wire", "local"),
    [
        ("mcp__pi__agent_write", "agent_write"),
        ("mcp__flows__flow_write", "flow_write"),
        ("mcp__pi__finish", "finish"),
        ("mcp__my_server__finish", None),
        ("find", "find"),
    ],
)
def test_tool_use_names_are_compared_prefix_stripped(
    flows: Engine, wire: str, local: str | None
) -> None:
    """Fix 8: tool calls whose name carries an `mcp__<ns>__` prefix reach the bare name."""
    assert flows.inbound_name(wire, registered=ARCHITECT) == local


def _sse(text: str, stop: str, step: int = 7) -> bytes:
    def ev(name: str, data: dict[str, Any]) -> bytes:
        return f"event: {name}\ndata: ".encode() + orjson.dumps(data) + b"\n\n"

    head = {"id": "msg_arch", "type": "message", "role": "assistant", "content": []}
    out = ev("message_start", {"type": "message_start", "message": head})
    block = {"type": "text", "text": ""}
    start = {"type": "content_block_start", "index": 0, "content_block": block}
    out += ev("content_block_start", start)
    for i in range(0, len(text), step):
        delta = {"type": "text_delta", "text": text[i : i + step]}
        event = {"type": "content_block_delta", "index": 0, "delta": delta}
        out += ev("content_block_delta", event)
    out += ev("content_block_stop", {"type": "content_block_stop", "index": 0})
    out += ev("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop}})
    return out + ev("message_stop", {"type": "message_stop"})


def test_finish_after_max_tokens_is_recovered_from_a_stream(flows: Engine) -> None:
    text = "Done.\n" + tag("mcp__pi__finish", FINISH)
    out = b"".join(flows.inbound_stream([_sse(text, "max_tokens")], registered=ARCHITECT))
    events = [
        orjson.loads(line[len(b"data: ") :])
        for line in out.split(b"\n")
        if line.startswith(b"data: ")
    ]
    starts = [e["content_block"] for e in events if e["type"] == "content_block_start"]
    assert [b["type"] for b in starts] == ["text", "tool_use"]
    assert starts[1]["name"] == "finish"
    given = [
        e["delta"]["partial_json"]
        for e in events
        if e["type"] == "content_block_delta" and e["delta"]["type"] == "input_json_delta"
    ]
    assert orjson.loads("".join(given)) == FINISH
    stops = [e["delta"]["stop_reason"] for e in events if e["type"] == "message_delta"]
    assert stops == ["tool_use"]
