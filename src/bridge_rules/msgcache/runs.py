"""The runs of messages the message cache stores, and its bounds and settings.

A run is one message or a conversation's older history: its elements as they stand in the
``messages`` array (``raw``) and as rewritten (``out``), comma-separated.
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

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
_CHAIN = 16
"""Entries a request may match before they are stored again as one run (``commit``). Each
entry matched costs a lookup, its renames and an LRU touch on every later request; 16
rather than 32 made the served turns of the 60-turn pi replay ~4 % cheaper (1.02x -> 0.98x
the floor), at the price of consolidating a long conversation twice as often (the 574-request
1 MB dense replay: 0.12-0.13x -> 0.13-0.14x the floor)."""
_KEEP = 4
"""Entries at the end of a consolidated chain that stay apart (the next request may change them)."""
_SIGHTS = 4096
"""How many conversation openings to remember before storing any (see ``seen_before``)."""


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


def settings_from_env(env: Mapping[str, str] | None = None) -> tuple[bool, int]:
    """(enabled, max_bytes) from ``BRIDGE_RULES_OUTBOUND_CACHE``; bad values mean the default."""
    value = (os.environ if env is None else env).get(ENV, "").strip().lower()
    if value in ("0", "off", "false", "no"):
        return False, DEFAULT_MAX_BYTES
    if value.isdigit():
        return True, int(value) * 1024 * 1024
    return True, DEFAULT_MAX_BYTES


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
