"""Shared helpers for the transform tests: engines and a recording fake for argument seams."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import bridge_rules
from bridge_rules.calls import ToolCall
from bridge_rules.engine import Engine

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
OPEN_ENV: dict[str, str] = {}


@pytest.fixture(scope="session")
def eng() -> Engine:
    return bridge_rules.load()


def write_rules(tmp_path: Path, body: str) -> Engine:
    path = tmp_path / "rules.yaml"
    path.write_text("bridge-rules: 1\nextends: default\n" + body, encoding="utf-8")
    return bridge_rules.load(str(path))


def adapting(engine: Engine, wire: str, rename: tuple[str, str]) -> Engine:
    """The engine with one wire tool whose binding renames an argument key.

    Stream holding only depends on the seam's answers, so the tests drive it
    through the seam rather than through whichever bindings the rules ship.
    """
    old, new = rename
    real_inbound = engine.inbound_call

    def inbound_call(name: str, arguments: Any, registered: Any = None) -> ToolCall:
        call = real_inbound(name, arguments, registered)
        if name == wire and isinstance(arguments, dict) and old in arguments:
            args = {new if k == old else k: v for k, v in arguments.items()}
            return ToolCall(call.name, args)
        return call

    def adapts_arguments(name: str, registered: Any = None) -> bool:
        return name == wire

    engine.inbound_call = inbound_call  # type: ignore[method-assign]
    engine.adapts_arguments = adapts_arguments  # type: ignore[method-assign]
    return engine


def tool_calls(stream: bytes) -> list[tuple[str, Any]]:
    """The (name, input) of every tool_use block a client would assemble from an SSE stream."""
    import orjson

    blocks: dict[int, list[Any]] = {}
    for line in stream.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n"):
        if not line.startswith(b"data:"):
            continue
        try:
            data = orjson.loads(line[5:])
        except orjson.JSONDecodeError:
            continue
        if (
            data.get("type") == "content_block_start"
            and data["content_block"]["type"] == "tool_use"
        ):
            blocks[data["index"]] = [data["content_block"]["name"], ""]
        elif data.get("type") == "content_block_delta" and data["index"] in blocks:
            blocks[data["index"]][1] += data["delta"].get("partial_json", "")
    return [(name, orjson.loads(text or "{}")) for name, text in blocks.values()]
