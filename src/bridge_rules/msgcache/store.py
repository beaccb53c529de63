"""The message cache's store: its index of runs by their bytes, lookup and update.

See :mod:`bridge_rules.msgcache` for how the index finds messages without parsing.
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence

from bridge_rules.msgcache.runs import (
    _CHAIN,
    _CLOSE,
    _COMMA,
    _OVERHEAD,
    _PREFIX,
    _SIBLINGS,
    _SIGHTS,
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_ENTRIES,
    DEFAULT_MIN_BODY,
    Draft,
    Entry,
    _consolidated,
    settings_from_env,
)
from bridge_rules.msgcache.tools import ToolsMemo, _tools_bytes


class MessageCache:
    """LRU of rewritten messages; every method is safe to call from several threads."""

    def __init__(
        self,
        *,
        enabled: bool = True,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        max_bytes: int = DEFAULT_MAX_BYTES,
        min_body: int = DEFAULT_MIN_BODY,
    ) -> None:
        self._lock = threading.Lock()
        self._serials = itertools.count(1)
        self._lru: OrderedDict[int, Entry] = OrderedDict()
        # (parent, first _PREFIX bytes) -> runs that long, most recently matched first.
        self._long: dict[tuple[int, bytes], list[Entry]] = {}
        # (parent, all the bytes) -> shorter runs (one per context); and, per parent, how
        # many such keys there are of each length.
        self._short: dict[tuple[int, bytes], list[Entry]] = {}
        self._short_lengths: dict[int, dict[int, int]] = {}
        self._bytes = 0
        self._sights: OrderedDict[bytes, None] = OrderedDict()
        self.tools = ToolsMemo(max_bytes=_tools_bytes(max_bytes))
        self.tool_values = ToolsMemo(max_bytes=_tools_bytes(max_bytes))
        """The same for arrays handed over as values (``Engine.outbound``), apart so that
        neither kind pushes the other's out."""
        self.enabled = enabled
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.min_body = min_body

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> MessageCache:
        enabled, max_bytes = settings_from_env(env)
        return cls(enabled=enabled, max_bytes=max_bytes)

    def configure(
        self,
        *,
        enabled: bool | None = None,
        max_entries: int | None = None,
        max_bytes: int | None = None,
        min_body: int | None = None,
    ) -> None:
        """Change the switch or the bounds (the proxy's options); shrinking evicts at once."""
        with self._lock:
            if enabled is not None:
                self.enabled = enabled
            if max_entries is not None:
                self.max_entries = max_entries
            if max_bytes is not None:
                self.max_bytes = max_bytes
                self.tools.limit(_tools_bytes(max_bytes))
                self.tool_values.limit(_tools_bytes(max_bytes))
            if min_body is not None:
                self.min_body = min_body
            if not self.enabled:
                self._clear()
            self._evict()

    def clear(self) -> None:
        with self._lock:
            self._clear()

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {"entries": len(self._lru), "bytes": self._bytes}

    # ------------------------------------------------------------ lookup
    def match(self, body: bytes, start: int) -> tuple[list[Entry], int]:
        """Entries standing one after another from ``start``, and where the rest begins.

        The rest begins after the comma that follows the last entry, or at the
        ``]`` that closes the array. Nothing is matched past a byte that is
        neither (whitespace between elements: such clients are not cached).
        """
        found: list[Entry] = []
        pos, parent, end_of_body = start, 0, len(body)
        with self._lock:
            while True:
                entry = self._successor(body, pos, parent)
                if entry is None:
                    break
                end = pos + len(entry.raw)
                if end >= end_of_body:
                    break
                after = body[end]
                if after == _COMMA:
                    found.append(entry)
                    pos, parent = end + 1, entry.serial
                    continue
                if after == _CLOSE:
                    found.append(entry)
                    pos = end
                break
        return found, pos

    def _successor(self, body: bytes, pos: int, parent: int) -> Entry | None:
        siblings = self._long.get((parent, body[pos : pos + _PREFIX]))
        if siblings:
            for i, entry in enumerate(siblings):
                if body.startswith(entry.raw, pos):
                    if i:  # most recently matched first: a live conversation is found at once
                        siblings.insert(0, siblings.pop(i))
                    return entry
        lengths = self._short_lengths.get(parent)
        if lengths:
            short = self._short
            for length in lengths:
                found = short.get((parent, body[pos : pos + length]))
                if found:
                    return found[0]
        return None

    def seen_before(self, opening: bytes) -> bool:
        """Whether a request opened its messages with these bytes lately; remembers this one.

        Storing a conversation from scratch costs a second serialisation of its
        history, so it waits for the second request that opens the same way: a
        one-off request costs what the plain path costs.
        """
        with self._lock:
            sights = self._sights
            if opening in sights:
                sights.move_to_end(opening)
                return True
            sights[opening] = None
            if len(sights) > _SIGHTS:
                sights.popitem(last=False)
            return False

    # ------------------------------------------------------------ update
    def commit(self, matched: Sequence[Entry], drafts: Sequence[Draft]) -> None:
        """Store ``drafts`` after the last of ``matched``; touch all of them, last first.

        A chain longer than ``_CHAIN`` entries is stored again as one run plus its
        last few entries, so matching a long conversation stays a handful of
        steps; the old chain is no longer touched and ages out.
        """
        if not self.enabled:
            return
        if len(matched) + len(drafts) > _CHAIN:
            pieces: list[Entry | Draft] = [*matched, *drafts]
            size = sum(len(piece.raw) + len(piece.out) for piece in pieces)
            # Twice the conversation must fit: the run is stored before the old chain ages out.
            if len({piece.context for piece in pieces}) == 1 and size * 2 <= self.max_bytes:
                matched, drafts = (), _consolidated(pieces)
        with self._lock:
            parent = matched[-1].serial if matched else 0
            chain = list(matched)
            if parent == 0 or parent in self._lru:
                for draft in drafts:
                    entry = self._insert(parent, draft)
                    if entry is None:
                        break
                    chain.append(entry)
                    parent = entry.serial
            lru = self._lru
            for entry in reversed(chain):
                if entry.serial in lru:
                    lru.move_to_end(entry.serial)
            self._evict()

    def _insert(self, parent: int, draft: Draft) -> Entry | None:
        size = len(draft.raw) + len(draft.out) + _OVERHEAD
        if size > self.max_bytes:
            return None
        index, key = self._slot(parent, draft.raw)
        bucket = index.get(key)
        if bucket is None:
            bucket = index[key] = []
            if index is self._short:
                lengths = self._short_lengths.setdefault(parent, {})
                lengths[len(draft.raw)] = lengths.get(len(draft.raw), 0) + 1
        for entry in bucket:
            if entry.raw == draft.raw and entry.context == draft.context:
                return entry
        entry = Entry(
            serial=next(self._serials),
            parent=parent,
            raw=draft.raw,
            out=draft.out,
            renames=draft.renames,
            context=draft.context,
            count=draft.count,
        )
        bucket.insert(0, entry)
        self._lru[entry.serial] = entry
        self._bytes += size
        if len(bucket) > _SIBLINGS:  # the sibling matched least lately leaves the store
            self._drop(bucket[-1])
        return entry

    def _slot(
        self, parent: int, raw: bytes
    ) -> tuple[dict[tuple[int, bytes], list[Entry]], tuple[int, bytes]]:
        """The index a run of these bytes belongs in under ``parent``, and its key there."""
        if len(raw) >= _PREFIX:
            return self._long, (parent, raw[:_PREFIX])
        return self._short, (parent, raw)

    def _evict(self) -> None:
        lru = self._lru
        while lru and (len(lru) > self.max_entries or self._bytes > self.max_bytes):
            self._drop(next(iter(lru.values())))

    def _drop(self, entry: Entry) -> None:
        """Take ``entry`` out of the LRU, the byte count and its index."""
        del self._lru[entry.serial]
        self._bytes -= len(entry.raw) + len(entry.out) + _OVERHEAD
        index, key = self._slot(entry.parent, entry.raw)
        bucket = index[key]
        bucket.remove(entry)
        if bucket:
            return
        del index[key]
        if index is self._short:
            lengths = self._short_lengths[entry.parent]
            lengths[len(entry.raw)] -= 1
            if not lengths[len(entry.raw)]:
                del lengths[len(entry.raw)]
                if not lengths:
                    del self._short_lengths[entry.parent]

    def _clear(self) -> None:
        self.tools.clear()
        self.tool_values.clear()
        self._sights.clear()
        self._lru.clear()
        self._long.clear()
        self._short.clear()
        self._short_lengths.clear()
        self._bytes = 0
