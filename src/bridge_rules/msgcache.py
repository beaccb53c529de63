"""A bounded, thread-safe store of rewritten conversation messages, keyed by their bytes.

Agents resend the whole conversation on every turn, and every message but the
newest was already rewritten on the previous request. This store remembers, for
each message it has seen, the exact bytes the client sent (``raw``) and the
bytes the rewrite produced (``out``), so a repeated message is copied instead of
parsed, rewritten and serialised again.

Finding messages in a request without parsing it: entries are linked in the
order they appeared, each indexed under its predecessor (``parent``) and its
first bytes. :meth:`MessageCache.match` walks a request's ``messages`` array
from its first element, at each position trying the successors of the last
entry it matched, and compares bytes (``startswith``, a ``memcmp``). Content
decides: an entry is only ever used where its exact bytes stand, so links that
turn out wrong cost a miss, never a wrong answer. What the bytes stand for (that
``start`` really is the top-level ``messages`` array) is the caller's to check.

One position can have many successors: every conversation's first message
follows the start, and a client that retries or branches leaves siblings. The
lookup stays bounded however many there are. A run shorter than ``_PREFIX``
bytes is indexed by all its bytes, looked up once per distinct short length
stored under that parent (at most ``_PREFIX``). Longer runs sharing their first
``_PREFIX`` bytes share a list, most recently matched first and at most
``_SIBLINGS`` long; the least recently matched beyond that leaves the store.

Bounded by entries and bytes, evicting the least recently used. A request
touches its entries last-to-first, so when one conversation outgrows the store
its tail goes first and its prefix, the part the next request can reuse, stays.
The store knows nothing about rules: it lives on one compiled
:class:`~bridge_rules.runtime.Runtime`, so new rules come with an empty store.

Beside the messages, :class:`ToolsMemo` keeps the last few distinct ``tools``
arrays requests sent, with what they decided: an agent sends the same tools on
every turn, and rewriting and checking a thousand of them costs more than
parsing the whole request.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections import OrderedDict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

ENV = "BRIDGE_RULES_OUTBOUND_CACHE"
"""``0``/``off`` turns the cache off; a positive integer sets its size in megabytes."""

DEFAULT_MAX_BYTES = 64 * 1024 * 1024
DEFAULT_MAX_ENTRIES = 50_000
DEFAULT_MIN_BODY = 16 * 1024
"""Requests smaller than this go the plain way. On replayed pi conversations both ways cost
about the same at 8-14 KB; above 16 KB the cache wins, by 2-4x at 30-56 KB."""

_PREFIX = 64
"""Bytes of a run that index it under its predecessor; shorter runs by all their bytes."""
_SIBLINGS = 64
"""Runs kept under one predecessor that share their first ``_PREFIX`` bytes."""
_OVERHEAD = 160
"""Bytes an entry costs beyond its two byte strings (object, index slots), for the byte cap."""
_COMMA, _CLOSE = ord(","), ord("]")
_CHAIN = 32
"""Entries a request may match before they are stored again as one run (``commit``)."""
_KEEP = 4
"""Entries at the end of a consolidated chain that stay apart (the next request may change them)."""
_SIGHTS = 4096
"""How many conversation openings to remember before storing any (see ``seen_before``)."""
TOOLS_ENTRIES = 8
"""Distinct ``tools`` arrays remembered (agents send one per session)."""
TOOLS_BYTES = 4 * 1024 * 1024
"""Their bytes as sent, all together (and at most a quarter of the cache's ``max_bytes``); the
parsed values they keep alive are a few times that."""


@dataclass(frozen=True, slots=True, eq=False)
class Entry:
    """A run of messages (one, or a conversation's older history) as sent and as rewritten.

    ``raw`` is the run's elements as they stand in the ``messages`` array,
    comma-separated; so is ``out``.
    """

    serial: int
    parent: int
    raw: bytes
    out: bytes
    renames: tuple[tuple[str, str], ...]
    """The (local, wire) renames this message contributes, in order of appearance."""
    context: Hashable
    """What else the rewrite depended on (the request's typed tools, the JSON codec): an
    entry is only used under an equal context."""
    count: int
    """How many messages the run holds."""


@dataclass(frozen=True, slots=True)
class Draft:
    """A run rewritten by this request, to be stored after the one before it."""

    raw: bytes
    out: bytes
    renames: tuple[tuple[str, str], ...]
    context: Hashable
    count: int = 1


@dataclass(frozen=True, slots=True, eq=False)
class ToolsEntry:
    """A ``tools`` array as sent (``raw``, from ``[`` to ``]``), parsed, and what it decided."""

    raw: bytes
    value: Any
    """``raw`` parsed; shared with every request that sends it, so read-only."""
    outcome: Any
    """What the rewrite made of it (``transform.outbound.ToolsOutcome``)."""
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


def settings_from_env(env: Mapping[str, str] | None = None) -> tuple[bool, int]:
    """(enabled, max_bytes) from ``BRIDGE_RULES_OUTBOUND_CACHE``; bad values mean the default."""
    value = (os.environ if env is None else env).get(ENV, "").strip().lower()
    if value in ("0", "off", "false", "no"):
        return False, DEFAULT_MAX_BYTES
    if value.isdigit():
        return True, int(value) * 1024 * 1024
    return True, DEFAULT_MAX_BYTES


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
        self._sights.clear()
        self._lru.clear()
        self._long.clear()
        self._short.clear()
        self._short_lengths.clear()
        self._bytes = 0


def _consolidated(pieces: Sequence[Entry | Draft]) -> list[Draft]:
    """``pieces`` as one run of all but the last ``_KEEP``, then those, as they were."""
    head, tail = pieces[:-_KEEP], pieces[-_KEEP:]
    renames: dict[str, str] = {}
    for piece in head:
        for name, wire in piece.renames:
            renames.setdefault(name, wire)
    run = Draft(
        raw=b",".join(piece.raw for piece in head),
        out=b",".join(piece.out for piece in head),
        renames=tuple(renames.items()),
        context=head[0].context,
        count=sum(piece.count for piece in head),
    )
    return [run, *(Draft(p.raw, p.out, p.renames, p.context, p.count) for p in tail)]


__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_ENTRIES",
    "DEFAULT_MIN_BODY",
    "ENV",
    "TOOLS_BYTES",
    "TOOLS_ENTRIES",
    "Draft",
    "Entry",
    "MessageCache",
    "ToolsEntry",
    "ToolsMemo",
    "settings_from_env",
]
