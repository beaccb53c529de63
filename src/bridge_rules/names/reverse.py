"""The reverse map: which local name each wire name comes back as, for a registered set.

Every rule that can send a local name out under a wire name *claims* that wire
name, ranked: a tool registered under the wire name itself, then an explicit
inverse entry, then anything else; the first claim of the best rank wins. One
builder makes every map. For the request path it keeps only the winners, as
plain names; for ``explain`` and lint (``sources=True``) it also keeps the
winning claims, described only when read, and reports the collisions.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeAlias

from bridge_rules.names.outbound import Outbound
from bridge_rules.names.trace import ReverseEntry
from bridge_rules.source import Span
from bridge_rules.stages import CompiledStage, PrefixStage, TableStage

_IDENTITY, _EXPLICIT, _OTHER = 0, 1, 2
"""Claim ranks, best first."""

_RESOLVED = -1
"""A claim's origin when a registered name goes out under the wire name (see :data:`Claim`)."""

Claim: TypeAlias = tuple[str, int, str, int, str | None]
"""(wire name, rank, local name, origin, the table key if a table entry claimed it).

``origin`` is the position of the stage that claimed it, or :data:`_RESOLVED`.
A plain tuple of strings and numbers: a map of 100,000 aliases makes as many
claims, which the garbage collector then need not traverse, and the request
path never reads more than the local name.
"""


@dataclass(frozen=True)
class Collision:
    """Several local names resolve to one wire name; ``winner`` is what inbound returns."""

    wire: str
    locals: tuple[str, ...]
    winner: str
    spans: tuple[Span | None, ...]
    folded: bool = False

    def describe(self) -> str:
        names = ", ".join(f"'{n}'" for n in self.locals)
        how = "differ only in case from" if self.folded else "resolve to"
        return (
            f"local tools {names} {how} wire name '{self.wire}'; inbound maps it to '{self.winner}'"
        )


@dataclass(frozen=True)
class Sources:
    """How a map's winners were claimed, and what they beat: ``explain`` and lint read it."""

    exact: dict[str, Claim]
    folded: dict[str, Claim]
    collisions: list[Collision]
    stages: Sequence[CompiledStage]
    outbound: Callable[[str], Outbound]

    def describe(self, claim: Claim) -> ReverseEntry:
        """The claim in words, with where its rule is written."""
        wire, _rank, local, origin, key = claim
        if origin == _RESOLVED:
            out = self.outbound(local)
            decider, hit = out.stage, out.hit
            how = f"{decider.kind} {hit.rule}" if decider and hit else "no stage matched"
            return ReverseEntry(local, how, hit.span if hit else None)
        stage = self.stages[origin]
        if isinstance(stage, PrefixStage):
            return ReverseEntry(local, f"prefix '{stage.value}'", stage.span)
        assert isinstance(stage, TableStage)
        if key is None:
            span = stage.inverse[wire][1]
            return ReverseEntry(local, f"{stage.kind} inverse '{wire}: {local}'", span)
        return ReverseEntry(local, f"{stage.kind} '{key}: {wire}'", stage.entries[key][1])


@dataclass(frozen=True)
class ReverseMap:
    """Wire name -> local name, exactly and (``insensitive`` rules) lowercased."""

    exact: dict[str, str]
    folded: dict[str, str]
    sources: Sources | None = None

    @property
    def collisions(self) -> list[Collision]:
        return self._sources.collisions

    def entry(self, key: str, folded: bool = False) -> ReverseEntry | None:
        """The winning claim on ``key`` (a lowercased name if ``folded``), described."""
        found = self._sources
        claim = (found.folded if folded else found.exact).get(key)
        return None if claim is None else found.describe(claim)

    @property
    def _sources(self) -> Sources:
        if self.sources is None:
            raise LookupError("this reverse map keeps only its winners; ask for one with sources")
        return self.sources


def build(
    stages: Sequence[CompiledStage],
    registered: tuple[str, ...],
    outbound: Callable[[str], Outbound],
    insensitive: bool,
    sources: bool,
) -> ReverseMap:
    """The reverse map for ``registered``; with ``sources``, how each name won, and collisions."""
    groups: dict[str, list[Claim]] | None = {} if sources else None
    folded_groups: dict[str, list[Claim]] | None = {} if sources else None
    won = _rank(_claims(stages, registered, outbound), False, groups)
    folded = _rank(won.values(), True, folded_groups) if insensitive else {}
    found = None
    if groups is not None and folded_groups is not None:
        found = Sources(won, folded, [], stages, outbound)
        found.collisions.extend(_collisions(groups, won, found, False))
        found.collisions.extend(_collisions(folded_groups, folded, found, True))
    return ReverseMap(
        {wire: claim[2] for wire, claim in won.items()},
        {low: claim[2] for low, claim in folded.items()},
        found,
    )


def _claims(
    stages: Sequence[CompiledStage],
    registered: tuple[str, ...],
    outbound: Callable[[str], Outbound],
) -> Iterator[Claim]:
    """Every claim on a wire name, in the order that breaks ties between equal ranks."""
    by_lower: dict[str, str] = {}
    for name in registered:
        by_lower.setdefault(name.lower(), name)
    present = frozenset(registered)
    # Unconditional inverses (``reverse: always``) and explicit inverse entries.
    for pos, stage in enumerate(stages):
        if not isinstance(stage, TableStage) or stage.kind == "canonical":
            continue
        if stage.reverse == "always":
            folded_keys = stage.case == "insensitive"
            for key, (wire, _span) in stage.entries.items():
                local = by_lower.get(key.lower(), key) if folded_keys else key
                yield (wire, _OTHER, local, pos, key)
        if stage.reverse != "none":
            only_present = stage.reverse == "registered"
            for wire, (local, _span) in stage.inverse.items():
                if not only_present or local in present:
                    yield (wire, _EXPLICIT, local, pos, None)
    # One claim per registered name, from the stage that names it on the way out.
    unclaimed = [
        (pos, s.value)
        for pos, s in enumerate(stages)
        if isinstance(s, PrefixStage) and s.inverse_for == "unclaimed"
    ]
    for name in registered:
        out = outbound(name)
        decider = out.stage
        if decider is not None and decider.reverse == "none":
            continue
        unchanged = out.wire == name
        yield (out.wire, _IDENTITY if unchanged else _OTHER, name, _RESOLVED, None)
        if unchanged and decider is not None and decider.kind == "canonical":
            for pos, prefix in unclaimed:
                yield (prefix + name, _OTHER, name, pos, None)


def _rank(
    claims: Iterable[Claim], fold: bool, groups: dict[str, list[Claim]] | None
) -> dict[str, Claim]:
    """The first claim of the best rank on each wire name (``fold``: each lowercased one);
    every claim also goes to its name's group when ``groups`` is given."""
    won: dict[str, Claim] = {}
    for claim in claims:
        key = claim[0].lower() if fold else claim[0]
        held = won.get(key)
        if held is None or claim[1] < held[1]:
            won[key] = claim
        if groups is not None:
            groups.setdefault(key, []).append(claim)
    return won


def _collisions(
    groups: dict[str, list[Claim]], won: dict[str, Claim], sources: Sources, folded: bool
) -> Iterator[Collision]:
    """Names claimed for several local tools. An exact claim that lost to a tool registered
    under the wire name, or to an explicit inverse, was overruled on purpose: not reported."""
    for key, group in groups.items():
        if len(group) == 1:  # uncontested, the common case
            continue
        winner = won[key][2]
        distinct = tuple(dict.fromkeys(claim[2] for claim in group))
        if len(distinct) == 1:
            continue
        if not folded and all(c[1] != _OTHER for c in group if c[2] != winner):
            continue
        wire = "/".join(claim[0] for claim in group) if folded else key
        spans = tuple(sources.describe(claim).span for claim in group)
        yield Collision(wire, distinct, winner, spans, folded=folded)


class ReverseMaps:
    """Reverse maps by registered set, built on first use; least recently used dropped.

    The request path asks for one tuple per response, many times: the last tuple
    is recognised by identity, so a lookup does not rehash it. Maps only ever
    replace whole maps, under a lock, so a resolver is safe to share.
    """

    def __init__(
        self,
        build: Callable[[tuple[str, ...], bool], ReverseMap],
        everything: tuple[str, ...],
        size: int,
    ) -> None:
        self._build = build
        self._everything = everything
        self._size = size
        self._maps: OrderedDict[tuple[str, ...], ReverseMap] = OrderedDict()
        self._all: ReverseMap | None = None
        self._last: tuple[tuple[str, ...], ReverseMap] | None = None
        self._lock = threading.Lock()

    def winners(self, registered: Iterable[str] | None) -> ReverseMap:
        """The map for ``registered`` (None: every name the rules know), sources or not."""
        if registered is None:
            found = self._all
            if found is None:
                found = self._all = self._get(self._everything, False)
            return found
        last = self._last
        if last is not None and last[0] is registered:
            return last[1]
        key = registered if type(registered) is tuple else tuple(registered)
        found = self._get(key, False)
        self._last = (key, found)
        return found

    def with_sources(self, registered: Iterable[str] | None) -> ReverseMap:
        """The map for ``registered`` with its sources and collisions (``explain``, lint)."""
        return self._get(self._everything if registered is None else tuple(registered), True)

    def _get(self, key: tuple[str, ...], sources: bool) -> ReverseMap:
        with self._lock:
            found = self._maps.get(key)
            if found is not None:
                self._maps.move_to_end(key)
        if found is None or (sources and found.sources is None):
            found = self._build(key, sources)
            with self._lock:
                self._maps[key] = found
                self._maps.move_to_end(key)
                if len(self._maps) > self._size:
                    self._maps.popitem(last=False)
        return found
