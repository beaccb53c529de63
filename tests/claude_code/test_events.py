"""The CLI's model-call events merged into the one answer the client gets."""

from __future__ import annotations

from typing import Any

from bridge_rules.proxy.claude_code.events import Bridge, assemble


def call(*blocks: dict[str, Any], stop: str = "tool_use", out: int = 5) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"id": "m", "role": "assistant", "content": []}},
        {"type": "ping"},
    ]
    for i, block in enumerate(blocks):
        if block["type"] == "text":
            events.append(
                {
                    "type": "content_block_start",
                    "index": i,
                    "content_block": {"type": "text", "text": ""},
                }
            )
            events.append(
                {
                    "type": "content_block_delta",
                    "index": i,
                    "delta": {"type": "text_delta", "text": block["text"]},
                }
            )
        else:
            events.append(
                {"type": "content_block_start", "index": i, "content_block": {**block, "input": {}}}
            )
            events.append(
                {
                    "type": "content_block_delta",
                    "index": i,
                    "delta": {"type": "input_json_delta", "partial_json": '{"a": 1}'},
                }
            )
        events.append({"type": "content_block_stop", "index": i})
    events.append(
        {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": out}}
    )
    events.append({"type": "message_stop"})
    return events  # fmt: skip


def bridged(bridge: Bridge, *calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = [e for events in calls for event in events for e in bridge.feed(event)]
    return out + bridge.finish()


def test_one_call_goes_through_with_names_mapped_back() -> None:
    bridge = Bridge(lambda n: {"mcp__bridge__todo": "todo"}.get(n, n), lambda name: False)
    events = bridged(
        bridge,
        call(
            {"type": "text", "text": "ok"},
            {"type": "tool_use", "id": "t1", "name": "mcp__bridge__todo"},
        ),
    )
    message = assemble(events)
    assert message["content"] == [
        {"type": "text", "text": "ok"},
        {"type": "tool_use", "id": "t1", "name": "todo", "input": {"a": 1}},
    ]
    assert message["stop_reason"] == "tool_use"
    assert bridge.proposed == 1
    assert [e["type"] for e in events].count("message_start") == 1
    assert "ping" not in [e["type"] for e in events]


def test_calls_the_cli_ran_itself_are_merged_out_of_the_answer() -> None:
    bridge = Bridge(lambda n: n, lambda name: name == "WebSearch")
    events = bridged(
        bridge,
        call(
            {"type": "text", "text": "searching "},
            {"type": "tool_use", "id": "w", "name": "WebSearch"},
            out=3,
        ),
        call({"type": "text", "text": "found it"}, stop="end_turn", out=4),
    )
    message = assemble(events)
    assert message["content"] == [
        {"type": "text", "text": "searching "},
        {"type": "text", "text": "found it"},
    ]
    assert message["stop_reason"] == "end_turn"
    assert message["usage"]["output_tokens"] == 7
    assert [e["index"] for e in events if e["type"] == "content_block_start"] == [0, 1]


def start(i: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": i, "content_block": block}


def delta(i: int, **change: str) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": i, "delta": change}


def test_thinking_and_its_signature_are_assembled_in_order() -> None:
    events = [
        {"type": "message_start", "message": {"id": "m", "role": "assistant", "content": []}},
        start(0, {"type": "thinking", "thinking": ""}),
        delta(0, type="thinking_delta", thinking="let me "),
        delta(0, type="thinking_delta", thinking="see"),
        delta(0, type="signature_delta", signature="sig"),
        {"type": "content_block_stop", "index": 0},
        start(1, {"type": "text", "text": ""}),
        delta(1, type="text_delta", text="done"),
        {"type": "content_block_stop", "index": 1},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 9},
        },
        {"type": "message_stop"},
    ]
    bridge = Bridge(lambda n: n, lambda name: False)
    out = bridged(bridge, events)
    assert [e["type"] for e in out] == [e["type"] for e in events]  # nothing held back or lost
    assert assemble(out)["content"] == [
        {"type": "thinking", "thinking": "let me see", "signature": "sig"},
        {"type": "text", "text": "done"},
    ]
    assert assemble(out)["usage"] == {"output_tokens": 9}
