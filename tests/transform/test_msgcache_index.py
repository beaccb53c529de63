"""The message cache's index: lookups stay bounded however many siblings one position has.

Every conversation's first message follows the same start, and a client that retries
or branches leaves siblings behind; a lookup must not walk all of them.
"""

from __future__ import annotations

from typing import Any, SupportsIndex

from bridge_rules.msgcache import Draft, MessageCache
from bridge_rules.msgcache.runs import _OVERHEAD, _PREFIX, _SIBLINGS

CONTEXT = ("typed", "codec")


class Counted(bytes):
    """A request body that counts the comparisons a lookup makes on it."""

    startswiths = 0
    slices = 0

    def startswith(self, prefix: Any, start: SupportsIndex | None = None, *rest: Any) -> bool:
        Counted.startswiths += 1
        return super().startswith(prefix, start, *rest)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            Counted.slices += 1
        return super().__getitem__(key)


def draft(raw: bytes) -> Draft:
    return Draft(raw, raw.upper(), (), CONTEXT)


def store_conversation(cache: MessageCache, first: bytes, second: bytes) -> None:
    cache.commit((), [draft(first), draft(second)])


def body_of(*messages: bytes) -> tuple[Counted, int]:
    head = b'{"model":"m","messages":['
    return Counted(head + b",".join(messages) + b"]}"), len(head)


def matched(cache: MessageCache, *messages: bytes) -> tuple[list[bytes], int, int]:
    """The raw runs matched, and the comparisons and slices it took."""
    body, start = body_of(*messages)
    Counted.startswiths = Counted.slices = 0
    found, _rest = cache.match(body, start)
    return [e.raw for e in found], Counted.startswiths, Counted.slices


def test_thousands_of_short_first_messages_are_found_in_a_few_steps() -> None:
    cache = MessageCache()
    second = b'{"role":"assistant","content":"ok"}'
    for i in range(3_000):
        store_conversation(cache, b'{"role":"user","content":"hi %d"}' % i, second)
    first = b'{"role":"user","content":"hi 1234"}'
    runs, startswiths, slices = matched(cache, first, second, b'{"role":"user","content":"new"}')
    assert runs == [first, second]
    # One slice per distinct short length under each parent, not one comparison per sibling.
    assert startswiths == 0
    assert slices <= 2 * 4 + 2
    assert matched(cache, b'{"role":"user","content":"hi 99999"}', second)[0] == []


def test_long_siblings_are_capped_most_recently_matched_first() -> None:
    cache = MessageCache()
    shared = b'{"role":"user","content":"' + b"s" * _PREFIX
    firsts = [shared + b'%d"}' % i for i in range(3 * _SIBLINGS)]
    second = b'{"role":"assistant","content":"ok"}'
    store_conversation(cache, firsts[0], second)
    for first in firsts[1:]:
        store_conversation(cache, first, second)
        assert matched(cache, firsts[0], second)[0] == [firsts[0], second]  # kept alive
    runs, startswiths, _slices = matched(cache, firsts[0], second)
    assert runs == [firsts[0], second]
    assert startswiths == 1  # the live one is first in its list
    assert matched(cache, firsts[-1], second)[0] == [firsts[-1], second]
    assert matched(cache, firsts[1], second)[0] == []  # matched least lately: it left
    _runs, startswiths, _slices = matched(cache, shared + b'none"}', second)
    assert startswiths <= _SIBLINGS  # a miss looks at no more than the cap
    stats = cache.stats()
    kept = cache._lru.values()
    assert stats["entries"] == len(kept)
    assert stats["bytes"] == sum(len(e.raw) + len(e.out) + _OVERHEAD for e in kept)


def test_evicting_siblings_leaves_the_index_empty() -> None:
    cache = MessageCache(max_entries=10)
    for i in range(500):
        store_conversation(
            cache, b'{"c":"%d"}' % i, b'{"role":"assistant","content":"' + b"x" * 80 + b'"}'
        )
    assert cache.stats()["entries"] <= 10
    cache.configure(max_entries=0)
    assert cache.stats() == {"entries": 0, "bytes": 0}
    assert cache._long == {}
    assert cache._short == {}
    assert cache._short_lengths == {}
