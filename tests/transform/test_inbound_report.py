"""``InboundReport.renamed``: the names the way back mapped, JSON and SSE alike."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from bridge_rules.engine import Engine
from bridge_rules.transform import InboundReport

REGISTERED = ["read", "bash", "my_tool"]
CALLS = [
    ("Read", {"file_path": "a.txt"}),  # arguments adapted: the stream holds its deltas
    ("Bash", {"command": "ls"}),
    ("Read", {"file_path": "b.txt"}),
    ("my_tool", {"x": 1}),  # already the local name: not a rename
]
EXPECTED = {"Read": "read", "Bash": "bash"}


def message() -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": "Reading."}]
    content += [
        {"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": args}
        for i, (name, args) in enumerate(CALLS)
    ]
    return {"id": "msg_1", "type": "message", "role": "assistant", "content": content}


def stream() -> bytes:
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"id": "m", "content": []}}
    ]
    for i, (name, args) in enumerate(CALLS):
        block = {"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": {}}
        events += [
            {"type": "content_block_start", "index": i, "content_block": block},
            {"type": "content_block_delta", "index": i,
             "delta": {"type": "input_json_delta", "partial_json": orjson.dumps(args).decode()}},
            {"type": "content_block_stop", "index": i},
        ]  # fmt: skip
    events += [{"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
               {"type": "message_stop"}]  # fmt: skip
    return b"".join(
        b"event: " + e["type"].encode() + b"\ndata: " + orjson.dumps(e) + b"\n\n" for e in events
    )


def test_a_message_reports_each_name_it_mapped_back(eng: Engine) -> None:
    report = InboundReport()
    out = eng.inbound(message(), REGISTERED, report)
    assert [b.get("name") for b in out["content"][1:]] == ["read", "bash", "read", "my_tool"]
    assert report.renamed == EXPECTED
    assert list(report.renamed) == ["Read", "Bash"]  # first seen first
    assert report.renamed_calls == 3


@pytest.mark.parametrize("size", [1, 7, 10_000])
def test_a_stream_reports_the_same_in_any_chunking(eng: Engine, size: int) -> None:
    body = stream()
    report = InboundReport()
    chunks = [body[i : i + size] for i in range(0, len(body), size)]
    out = b"".join(eng.inbound_stream(chunks, REGISTERED, report))
    assert b'"name":"read"' in out
    assert report.renamed == EXPECTED
    assert report.renamed_calls == 3


def test_nothing_mapped_back_reports_nothing(eng: Engine) -> None:
    report = InboundReport()
    eng.inbound({"content": [{"type": "tool_use", "id": "t", "name": "my_tool", "input": {}}]},
                REGISTERED, report)  # fmt: skip
    assert report.renamed == {}
    assert report.renamed_calls == 0
