"""Malformed streams never lose a call's arguments: each case compares what the client
assembles with what the upstream sent (adapted when whole, as received when not)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

import bridge_rules

ENG = bridge_rules.load()
REGISTERED = ["bash", "read", "edit"]


def ev(name: str, data: dict[str, Any], named: bool) -> bytes:
    head = b"event: " + name.encode() + b"\n" if named else b""
    return head + b"data: " + orjson.dumps({"type": name, **data}) + b"\n\n"


def start(index: int, name: str, named: bool = True) -> bytes:
    block = {"type": "tool_use", "id": f"toolu_{index}", "name": name, "input": {}}
    return ev("content_block_start", {"index": index, "content_block": block}, named)


def text_start(index: int, named: bool = True) -> bytes:
    block = {"type": "text", "text": ""}
    return ev("content_block_start", {"index": index, "content_block": block}, named)


def delta(index: int, partial: str, named: bool = True) -> bytes:
    body = {"index": index, "delta": {"type": "input_json_delta", "partial_json": partial}}
    return ev("content_block_delta", body, named)


def stop(index: int, named: bool = True) -> bytes:
    return ev("content_block_stop", {"index": index}, named)


def message_end(named: bool = True) -> bytes:
    return ev("message_delta", {"delta": {"stop_reason": "tool_use"}}, named) + ev(
        "message_stop", {}, named
    )


def events(stream: bytes) -> list[dict[str, Any]]:
    out = []
    for line in stream.split(b"\n"):
        if line.startswith(b"data: "):
            out.append(orjson.loads(line[6:]))
    return out


def calls(stream: bytes) -> list[tuple[str, str]]:
    """(name, raw input text) of every tool_use block, in the order a client sees them;
    a block starts again at a repeated content_block_start."""
    blocks: list[list[str]] = []
    open_at: dict[int, list[str]] = {}
    for data in events(stream):
        if data["type"] == "content_block_start":
            block = [data["content_block"].get("name", ""), ""]
            blocks.append(block)
            open_at[data["index"]] = block
        elif data["type"] == "content_block_delta" and "partial_json" in data["delta"]:
            open_at[data["index"]][1] += data["delta"]["partial_json"]
    return [(name, text) for name, text in blocks if name]


def rewrite(stream: bytes, chunk: int | None = None) -> bytes:
    parts = (
        [stream] if chunk is None else [stream[i : i + chunk] for i in range(0, len(stream), chunk)]
    )
    return b"".join(ENG.inbound_stream(parts, REGISTERED))


def adapted(args: dict[str, Any]) -> dict[str, Any]:
    return ENG.inbound_call("Bash", args, REGISTERED).arguments


FIRST = {"command": "make", "timeout": 1001, "description": "build"}
SECOND = {"command": "ls", "timeout": 2000}


@pytest.mark.parametrize("named", [True, False])
@pytest.mark.parametrize("chunk", [None, 1, 7])
def test_a_duplicate_start_flushes_the_held_block_first(named: bool, chunk: int | None) -> None:
    upstream = (
        start(0, "Bash", named)
        + delta(0, orjson.dumps(FIRST).decode()[:9], named)
        + delta(0, orjson.dumps(FIRST).decode()[9:], named)
        + start(0, "Bash", named)
        + delta(0, orjson.dumps(SECOND).decode(), named)
        + stop(0, named)
        + message_end(named)
    )
    got = calls(rewrite(upstream, chunk))
    assert [(name, orjson.loads(text)) for name, text in got] == [
        ("bash", adapted(FIRST)),
        ("bash", adapted(SECOND)),
    ]
    assert adapted(FIRST) == {"command": "make", "timeout": 1.001}


def test_a_duplicate_start_releases_incomplete_input_as_received() -> None:
    upstream = (
        start(0, "Bash")
        + delta(0, '{"command": "ma')
        + start(0, "Bash")
        + delta(0, '{"command": "ls"}')
        + stop(0)
    )
    out = rewrite(upstream, 5)
    assert calls(out) == [("bash", '{"command": "ma'), ("bash", '{"command":"ls"}')]
    assert delta(0, '{"command": "ma') in out  # byte for byte what the upstream sent


def test_a_duplicate_start_of_another_kind_still_flushes() -> None:
    upstream = start(0, "Bash") + delta(0, orjson.dumps(FIRST).decode()) + text_start(0)
    out = rewrite(upstream)
    assert [(n, orjson.loads(t)) for n, t in calls(out)] == [("bash", adapted(FIRST))]
    assert out.index(b"input_json_delta") < out.index(b'"type":"text"')


@pytest.mark.parametrize("named", [True, False])
@pytest.mark.parametrize("chunk", [None, 1, 11])
def test_held_deltas_come_out_before_the_message_ends(named: bool, chunk: int | None) -> None:
    upstream = start(0, "Bash", named) + delta(0, orjson.dumps(FIRST).decode(), named)
    upstream += message_end(named)  # no content_block_stop
    out = rewrite(upstream, chunk)
    kinds = [e["type"] for e in events(out)]
    assert kinds == ["content_block_start", "content_block_delta", "message_delta", "message_stop"]
    assert [(n, orjson.loads(t)) for n, t in calls(out)] == [("bash", adapted(FIRST))]


def test_incomplete_held_deltas_before_message_stop_are_released_as_received() -> None:
    upstream = start(0, "Bash") + delta(0, '{"command": "ma') + ev("message_stop", {}, True)
    out = rewrite(upstream)
    assert out == start(0, "bash") + delta(0, '{"command": "ma') + ev("message_stop", {}, True)


def test_two_held_blocks_flush_in_index_order_before_message_stop() -> None:
    upstream = (
        start(0, "Bash")
        + start(1, "Bash")
        + delta(1, orjson.dumps(SECOND).decode())
        + delta(0, orjson.dumps(FIRST).decode())
        + ev("message_stop", {}, True)
    )
    out = rewrite(upstream, 3)
    got = [(n, orjson.loads(t)) for n, t in calls(out)]
    assert got == [("bash", adapted(FIRST)), ("bash", adapted(SECOND))]
    assert out.endswith(ev("message_stop", {}, True))


def test_a_truncated_stream_releases_what_it_holds() -> None:
    upstream = start(0, "Bash") + delta(0, '{"command": "make"')
    assert rewrite(upstream, 4) == start(0, "bash") + delta(0, '{"command": "make"')


def test_text_mentioning_message_stop_is_not_an_end() -> None:
    upstream = start(0, "Bash") + delta(0, '{"command": "echo message_stop"}') + stop(0)
    out = rewrite(upstream)
    assert [(n, orjson.loads(t)) for n, t in calls(out)] == [
        ("bash", {"command": "echo message_stop"})
    ]
    assert [e["type"] for e in events(out)][-1] == "content_block_stop"
