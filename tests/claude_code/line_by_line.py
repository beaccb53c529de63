"""The history replay as it was written before batching: the oracle of
test_replay_writes.py and the "before" of benchmarks/bench_claude_code_replay.py."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from bridge_rules.proxy.claude_code.session import Session


class LineByLine(Session):
    """One line per SDK ``query()``, every user line's turn awaited before the next line
    is written."""

    async def _replay(self, lines: list[dict[str, Any]], last: bool = False) -> None:
        messages = self._messages()
        for n, line in enumerate(lines, 1):

            async def one(line: dict[str, Any] = line) -> AsyncIterator[dict[str, Any]]:
                yield line

            await self.client.query(one())
            if line["type"] == "user" and not (last and n == len(lines)):
                await self._until_result(messages)
        self.replayed += len(lines)
