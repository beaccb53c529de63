"""A rewriter double for the proxy's mechanics tests.

It rewrites visibly (a marker key each way) and records what the proxy handed
it, so a test can tell which body went where without depending on the rules.
The real rules (a Runtime) are exercised by tests/e2e and test_proxy_hostile.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Result:
    payload: dict[str, Any]
    renames: dict[str, str]
    gate_open: bool
    registered: list[str]


@dataclass
class MarkingEngine:
    stream_chunks: list[bytes] = field(default_factory=list)
    stream_registered: list[list[str] | None] = field(default_factory=list)
    fail: bool = False

    def outbound(self, payload: dict[str, Any], model: str | None = None) -> Result:
        if self.fail:
            raise RuntimeError("engine exploded")
        names = [t["name"] for t in payload.get("tools", [])]
        if not (model and "claude" in model):
            return Result(payload, {}, False, names)
        return Result({**payload, "x_outbound": True}, {n: n.upper() for n in names}, True, names)

    def inbound(self, message: dict[str, Any], registered: list[str] | None = None) -> Any:
        return {**message, "x_inbound": registered}

    async def stream(
        self, chunks: AsyncIterator[bytes], registered: list[str]
    ) -> AsyncIterator[bytes]:
        self.stream_registered.append(registered)
        async for chunk in chunks:
            self.stream_chunks.append(chunk)
            yield chunk
