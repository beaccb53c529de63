"""What bounds ``Engine.outbound`` on a dense history, for ``bench_outbound.py --only requests``.

The floor is the caller's ``orjson`` parse and serialisation; everything ``Engine.outbound``
adds is a walk of the parsed history in Python. Two walks simpler than any rewrite,
measured against the same floor, say what the least such walk costs: one that only visits
every content block and reads its type, and the least copy-on-write replay (every message
that holds a ``tool_use`` copied with its content, each call copied with a new name and its
input renamed by one comprehension). Neither checks ids, names or shapes, as the rules must.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from typing import Any

import orjson

_RENAME = {"path": "file_path"}


def _visit(messages: list[Any]) -> None:
    for message in messages:
        for block in message["content"]:
            block.get("type")


def _least_replay(messages: list[Any]) -> list[Any]:
    out = messages.copy()
    get = _RENAME.get
    for i, message in enumerate(messages):
        content = message["content"]
        new_content = None
        for j, block in enumerate(content):
            if block.get("type") == "tool_use":
                if new_content is None:
                    new_content = content.copy()
                new_block = block.copy()
                new_block["name"] = "Wire"
                new_block["input"] = {get(k, k): v for k, v in block["input"].items()}
                new_content[j] = new_block
        if new_content is not None:
            out[i] = {**message, "content": new_content}
    return out


def _best(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def bound(raw: bytes, floor: float, repeat: int) -> str:
    """The two walks over ``raw``'s messages as ratios to ``floor`` (collector paused, as
    ``Engine.outbound`` pauses it over a long history)."""
    messages = orjson.loads(raw)["messages"]
    gc.disable()
    try:
        visit = _best(lambda: _visit(messages), repeat)
        replay = _best(lambda: _least_replay(messages), repeat)
    finally:
        gc.enable()
    return (
        f"visiting every block {visit / floor:.2f}x, "
        f"the least copy-on-write replay {replay / floor:.2f}x"
    )
