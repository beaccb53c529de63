"""The last few distinct ``tools`` arrays requests sent, with what they decided.

An agent sends the same tools on every turn, and rewriting and checking a thousand of them
costs more than parsing the whole request; the message cache keeps this memo beside its runs.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

TOOLS_ENTRIES = 8
"""Distinct ``tools`` arrays remembered (agents send one per session)."""
TOOLS_BYTES = 4 * 1024 * 1024
"""Their bytes as sent, all together (and at most a quarter of the cache's ``max_bytes``); the
parsed values they keep alive are a few times that."""


@dataclass(frozen=True, slots=True, eq=False)
class ToolsEntry:
    """A ``tools`` array as sent (``raw``, from ``[`` to ``]``), parsed, and what it decided."""

    raw: bytes
    value: Any
    """``raw`` parsed; shared with every request that sends it, so read-only."""
    outcome: Any
    """What the rewrite made of it (``transform.outbound_tools.ToolsOutcome``)."""
    context: Hashable
    """The JSON codec that parsed ``raw``: an entry serves only the same codec."""
    head: int
    """Where ``raw`` stood from the start of the body it came in; an agent's next body
    keeps what precedes its tools (model, system...) or what follows them."""
    tail: int
    """... and from the end of that body."""


class ToolsMemo:
    """The last few distinct ``tools`` arrays, most recently used first; thread-safe.

    Looking an array up never scans the body: each entry is tried where it stood in the
    body it came in, counted from the start and from the end.
    """

    def __init__(self, max_entries: int = TOOLS_ENTRIES, max_bytes: int = TOOLS_BYTES) -> None:
        self._lock = threading.Lock()
        self._entries: list[ToolsEntry] = []
        self.max_entries = max_entries
        self.max_bytes = max_bytes

    def find(self, body: bytes, key: bytes, context: Hashable) -> tuple[ToolsEntry, int] | None:
        """An entry for ``context`` whose bytes stand in ``body`` right after ``key``, where
        they stood before, and where (an array ends where its bytes end)."""
        with self._lock:
            entries = self._entries
            for i, entry in enumerate(entries):
                if entry.context != context:
                    continue
                for pos in (entry.head, len(body) - entry.tail):
                    if (
                        pos >= len(key)
                        and body.startswith(entry.raw, pos)
                        and body.startswith(key, pos - len(key))
                    ):
                        if i:
                            entries.insert(0, entries.pop(i))
                        return entry, pos
        return None

    def get(self, raw: bytes, context: Hashable) -> ToolsEntry | None:
        """The entry for ``context`` whose bytes are ``raw`` (an array handed over as a
        value, not found in a body: ``transform.outbound_tools.remembered_tools``)."""
        with self._lock:
            entries = self._entries
            for i, entry in enumerate(entries):
                if entry.raw == raw and entry.context == context:
                    if i:
                        entries.insert(0, entries.pop(i))
                    return entry
        return None

    def add(self, entry: ToolsEntry) -> None:
        if len(entry.raw) > self.max_bytes:
            return
        with self._lock:
            entries = [e for e in self._entries if e.raw != entry.raw or e.context != entry.context]
            entries.insert(0, entry)
            self._entries = entries
            self._evict()

    def limit(self, max_bytes: int) -> None:
        """A new byte bound; what no longer fits leaves, least recently used first."""
        with self._lock:
            self.max_bytes = max_bytes
            self._evict()

    def _evict(self) -> None:
        entries = self._entries
        size = sum(len(e.raw) for e in entries)
        while entries and (len(entries) > self.max_entries or size > self.max_bytes):
            size -= len(entries.pop().raw)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


def _tools_bytes(max_bytes: int) -> int:
    """The tools memo's byte bound under a cache of ``max_bytes``."""
    return min(TOOLS_BYTES, max_bytes // 4)
