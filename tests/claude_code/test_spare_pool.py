"""The spare pool's choices, with stand-in sessions (no CLI): what a request finds ready.

The oracle is the conversation a client sends, turn by turn: a request finds a spare when
the pool holds one of its shape whose prepared lines (if any) are the start of its own.
opencode moves its ``cache_control`` markers every request, so its history never continues
the lines it sent before; with ``--claude-prepare`` it must still find the bare spare.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.budget import examples

from bridge_rules.proxy.claude_code.spares import Spares


class _Process:
    def kill(self) -> None:
        pass


class StandIn:
    """What the pool asks of a Session: its shape, a start, and an end."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.process = _Process()
        self.prepared: list[dict[str, Any]] = []

    def shape(self) -> str:
        return self.key

    async def start(self) -> bool:
        return True

    async def prepare(self, lines: list[dict[str, Any]]) -> bool:
        self.prepared = list(lines)
        return True

    def alive(self) -> bool:
        return True

    def discard(self) -> None:
        pass

    async def close(self) -> None:
        pass


def _line(text: str, marked: bool) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": text}
    if marked:
        block["cache_control"] = {"type": "ephemeral"}
    return {"type": "user", "message": {"role": "user", "content": [block]}}


def _conversation(turn: int, moving_markers: bool) -> list[dict[str, Any]]:
    """Request ``turn``'s lines; with moving markers the last two carry cache_control."""
    n = turn + 1
    return [_line(f"turn {i}", moving_markers and i >= n - 2) for i in range(n)]


async def _session(limit: int, moving: bool, prepare: bool, turns: int) -> list[bool]:
    pool = Spares(limit, ttl=60)
    found = []
    for turn in range(turns):
        lines = _conversation(turn, moving)
        spare = pool.take("shape", lines)
        found.append(spare is not None)
        if spare is not None:
            await spare.ready()
            pool.end(spare)
        history = lines[:-1] if prepare else []
        pool.leave(lambda: StandIn("shape"), history)  # type: ignore[arg-type, return-value]
        assert len(pool) <= limit
        await asyncio.sleep(0)
    await pool.aclose()
    return found


@settings(max_examples=examples(30), deadline=None)
@given(
    limit=st.integers(2, 4),
    moving=st.booleans(),
    prepare=st.booleans(),
    turns=st.integers(2, 12),
)
def test_every_turn_after_the_first_finds_a_spare(
    limit: int, moving: bool, prepare: bool, turns: int
) -> None:
    found = asyncio.run(_session(limit, moving, prepare, turns))
    assert found == [False] + [True] * (turns - 1)


@pytest.mark.parametrize("moving", [False, True])
def test_a_prepared_spare_is_taken_when_the_history_continues(moving: bool) -> None:
    async def run() -> int:
        pool = Spares(2, ttl=60)
        first = _conversation(3, moving)
        pool.leave(lambda: StandIn("shape"), first[:-1])  # type: ignore[arg-type, return-value]
        spare = pool.take("shape", _conversation(4, moving))
        assert spare is not None
        held = spare.history[0]
        await pool.aclose()
        pool.end(spare)
        return held

    held = asyncio.run(run())
    assert held == (0 if moving else 3)


def test_one_spare_of_room_keeps_the_prepared_one() -> None:
    async def run() -> list[int]:
        pool = Spares(1, ttl=60)
        lines = _conversation(3, False)
        pool.leave(lambda: StandIn("shape"), lines[:-1])  # type: ignore[arg-type, return-value]
        held = [s.history[0] for s in pool._spares]
        await pool.aclose()
        return held

    assert asyncio.run(run()) == [3]
