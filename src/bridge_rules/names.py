"""Name resolution at run time, both ways, with an optional trace.

Outbound: the first stage that matches decides (memoised per name, so after
the first call a resolution is one dict lookup). Inbound: a reverse map built
for a set of registered local names (cached per set), looked up exactly, then
case-insensitively, then with prefix and suffix strips, as the rules say.

The trace is produced by the same code path that serves real traffic:
``explain`` renders it; there is no second resolver.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from bridge_rules.source import Span
from bridge_rules.stageindex import StageIndex
from bridge_rules.stages import (
    CompiledStage,
    Gateway,
    Hit,
    NameGuard,
    PrefixStage,
    Strip,
    TableStage,
)
from bridge_rules.wirenames import is_valid, shorten


@dataclass(frozen=True)
class StageStep:
    """One stage consulted for an outbound name."""

    index: int
    stage: str
    kind: str
    matched: bool
    detail: str
    span: Span

    def to_dict(self) -> dict[str, object]:
        return {
            "index": self.index,
            "stage": self.stage,
            "kind": self.kind,
            "matched": self.matched,
            "detail": self.detail,
            "location": str(self.span),
        }


@dataclass(frozen=True)
class Outbound:
    """The wire name for a local name and the stage/rule that decided it."""

    local: str
    wire: str
    stage: CompiledStage | None
    hit: Hit | None

    @property
    def unchanged(self) -> bool:
        return self.wire == self.local


@dataclass(frozen=True)
class ReverseEntry:
    local: str
    source: str  # what produced the entry, e.g. "capitalize 'read: Read'"
    span: Span | None
    identity: bool = False
    explicit: bool = False


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
class InboundStep:
    action: str
    name: str
    result: str | None
    detail: str
    span: Span | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "action": self.action,
            "name": self.name,
            "result": self.result,
            "detail": self.detail,
            "location": str(self.span) if self.span else None,
        }


@dataclass
class ReverseMap:
    exact: dict[str, ReverseEntry] = field(default_factory=dict)
    folded: dict[str, ReverseEntry] = field(default_factory=dict)
    collisions: list[Collision] = field(default_factory=list)


@dataclass(frozen=True)
class FastReverse:
    """The winners of a :class:`ReverseMap`, as plain names: what serving traffic needs.

    Built without entry objects, sources or collision reports (``explain`` and
    lint build the full map); the same winners by construction, and by test.
    """

    exact: dict[str, str]
    folded: dict[str, str]


_IDENTITY, _EXPLICIT, _OTHER = 0, 1, 2
"""Claim ranks, as :func:`_pick` orders them: the first claim of the best rank wins."""


class Resolver:
    """Outbound and inbound name resolution over compiled stages.

    Built once by the compiler. Its two caches (outbound names, reverse maps per
    registered set) only ever gain whole entries, so it is safe to share.
    """

    def __init__(
        self,
        *,
        stages: Sequence[CompiledStage],
        strips: Sequence[Strip],
        insensitive: bool,
        local_tools: Iterable[str],
        reverse_cache_size: int = 128,
        gateway: Gateway | None = None,
        guard: NameGuard | None = None,
    ) -> None:
        self.guard = guard if guard is not None and guard.on_invalid == "shorten" else None
        self.stages = tuple(stages)
        self._index = StageIndex(self.stages)
        self.strips = tuple(strips)
        self.gateway = gateway if gateway is not None and gateway.active else None
        self._memo: dict[str, Outbound] = {}
        self._reverse: OrderedDict[tuple[str, ...], ReverseMap] = OrderedDict()
        self._reverse_cache_size = reverse_cache_size
        self._fast: OrderedDict[tuple[str, ...], FastReverse] = OrderedDict()
        self._fast_all: FastReverse | None = None
        self._fast_last: tuple[tuple[str, ...], FastReverse] | None = None
        self._fast_lock = threading.Lock()
        self._prefix_strips = [
            s for s in self.stages if isinstance(s, PrefixStage) and s.reverse == "always"
        ]
        self._insensitive = insensitive
        # The local names the rules know; what `registered=None` means. Rules never change.
        known = dict.fromkeys(local_tools)
        for stage in self.stages:
            known.update(dict.fromkeys(stage.local_names()))
        self._known_locals: tuple[str, ...] = tuple(known)
        # Room for every name the rules know plus as many unknown ones, so a large
        # table's own names stay memoised (the compiler and lint ask for each of them).
        self._memo_cap = 65536 + len(self._known_locals)

    # ----------------------------------------------------------- outbound
    def outbound(self, name: str, trace: list[StageStep] | None = None) -> Outbound:
        if trace is None:
            cached = self._memo.get(name)
            if cached is not None:
                return cached
        result = Outbound(name, name, None, None)
        if trace is None:
            found = self._index.first(name)
            if found is not None:
                result = Outbound(name, found[1].wire, self.stages[found[0]], found[1])
        else:
            result = self._traced(name, trace)
        if self.guard is not None and not is_valid(result.wire, self.guard.max_length):
            result = self._shortened(result, trace)
        if len(self._memo) < self._memo_cap:
            self._memo[name] = result
        return result

    def _traced(self, name: str, trace: list[StageStep]) -> Outbound:
        """Every stage in turn, recording why each did or did not decide (explain)."""
        for stage in self.stages:
            hit = stage.match(name)
            if hit is None:
                trace.append(
                    StageStep(
                        stage.index, stage.id, stage.kind, False, stage.why_not(name), stage.span
                    )
                )
                continue
            detail = f"matched {hit.rule} -> {hit.wire!r}"
            trace.append(StageStep(stage.index, stage.id, stage.kind, True, detail, hit.span))
            return Outbound(name, hit.wire, stage, hit)
        return Outbound(name, name, None, None)

    def first_hit(self, name: str, before: int) -> tuple[CompiledStage, Hit] | None:
        """The first of the stages before position ``before`` that decides ``name``."""
        found = self._index.first(name, before)
        return None if found is None else (self.stages[found[0]], found[1])

    def _shortened(self, result: Outbound, trace: list[StageStep] | None) -> Outbound:
        """``wire_names.on_invalid: shorten``: a valid name that maps back (reverse map)."""
        guard = self.guard
        assert guard is not None
        short = shorten(result.wire, guard.max_length)
        if trace is not None:
            detail = (
                f"'{result.wire}' is not a valid wire name (max {guard.max_length}, a-zA-Z0-9_-)"
                f" -> shortened to '{short}'"
            )
            span = guard.span if guard.span is not None else Span("<defaults>")
            trace.append(StageStep(len(self.stages), "wire_names", "guard", True, detail, span))
        return Outbound(result.local, short, result.stage, result.hit)

    # ------------------------------------------------------------ reverse
    @property
    def known_locals(self) -> tuple[str, ...]:
        return self._known_locals

    def reverse_map(self, registered: Iterable[str] | None) -> ReverseMap:
        key = self._known_locals if registered is None else tuple(registered)
        cached = self._reverse.get(key)
        if cached is not None:
            self._reverse.move_to_end(key)
            return cached
        built = self._build_reverse(list(key))
        self._reverse[key] = built
        if len(self._reverse) > self._reverse_cache_size:
            self._reverse.popitem(last=False)
        return built

    def fast_reverse(self, registered: Iterable[str] | None) -> FastReverse:
        """The reverse winners for ``registered``, cached by the set (None: every known name).

        The request path asks for one tuple per response, many times: the last
        tuple is recognised by identity, so a lookup does not rehash it.
        """
        if registered is None:
            fast = self._fast_all
            if fast is None:
                fast = self._fast_all = self._build_fast(self._known_locals)
            return fast
        last = self._fast_last
        if last is not None and last[0] is registered:
            return last[1]
        key = registered if type(registered) is tuple else tuple(registered)
        with self._fast_lock:
            fast = self._fast.get(key)
            if fast is not None:
                self._fast.move_to_end(key)
        if fast is None:
            fast = self._build_fast(key)
            with self._fast_lock:
                self._fast[key] = fast
                if len(self._fast) > self._reverse_cache_size:
                    self._fast.popitem(last=False)
        self._fast_last = (key, fast)
        return fast

    def _build_fast(self, registered: tuple[str, ...]) -> FastReverse:
        """:meth:`_build_reverse`'s winners, claim for claim in the same order.

        Read off the full map instead when lint (or ``explain``) already built it.
        """
        full = self._reverse.get(registered)
        if full is not None:
            return FastReverse(
                {wire: entry.local for wire, entry in full.exact.items()},
                {low: entry.local for low, entry in full.folded.items()},
            )
        ranked: dict[str, tuple[int, str]] = {}

        def claim(wire: str, rank: int, local: str) -> None:
            held = ranked.get(wire)
            if held is None or rank < held[0]:
                ranked[wire] = (rank, local)

        by_lower: dict[str, str] = {}
        for name in registered:
            by_lower.setdefault(name.lower(), name)
        present = set(registered)
        for stage in self.stages:
            if not isinstance(stage, TableStage) or stage.kind == "canonical":
                continue
            if stage.reverse == "always":
                folded_keys = stage.case == "insensitive"
                for key, (wire, _span) in stage.entries.items():
                    claim(wire, _OTHER, by_lower.get(key.lower(), key) if folded_keys else key)
            if stage.reverse != "none":
                only_present = stage.reverse == "registered"
                for wire, (local, _span) in stage.inverse.items():
                    if not only_present or local in present:
                        claim(wire, _EXPLICIT, local)
        unclaimed = [
            s.value
            for s in self.stages
            if isinstance(s, PrefixStage) and s.inverse_for == "unclaimed"
        ]
        for name in registered:
            out = self.outbound(name)
            decider = out.stage
            if decider is not None and decider.reverse == "none":
                continue
            unchanged = out.wire == name
            claim(out.wire, _IDENTITY if unchanged else _OTHER, name)
            if unchanged and decider is not None and decider.kind == "canonical":
                for prefix in unclaimed:
                    claim(prefix + name, _OTHER, name)
        folded: dict[str, tuple[int, str]] = {}
        if self._insensitive:
            for wire, (rank, local) in ranked.items():
                low = wire.lower()
                held = folded.get(low)
                if held is None or rank < held[0]:
                    folded[low] = (rank, local)
        return FastReverse(
            {wire: local for wire, (_rank, local) in ranked.items()},
            {low: local for low, (_rank, local) in folded.items()},
        )

    def _build_reverse(self, registered: list[str]) -> ReverseMap:
        rmap = ReverseMap()
        registered_set = frozenset(registered)
        by_lower: dict[str, str] = {}
        for name in registered:
            by_lower.setdefault(name.lower(), name)
        claims: dict[str, list[tuple[str, ReverseEntry]]] = {}

        def add(wire: str, entry: ReverseEntry) -> None:
            claims.setdefault(wire, []).append((wire, entry))

        # Unconditional inverses (``reverse: always``) and explicit inverse entries.
        for stage in self.stages:
            if not isinstance(stage, TableStage) or stage.kind == "canonical":
                continue
            if stage.reverse == "always":
                for key, (wire, span) in stage.entries.items():
                    local = by_lower.get(key.lower(), key) if stage.case == "insensitive" else key
                    add(wire, ReverseEntry(local, f"{stage.kind} '{key}: {wire}'", span))
            if stage.reverse != "none":
                for wire, (local, span) in stage.inverse.items():
                    if stage.reverse == "registered" and local not in registered_set:
                        continue
                    add(
                        wire,
                        ReverseEntry(
                            local, f"{stage.kind} inverse '{wire}: {local}'", span, explicit=True
                        ),
                    )

        # One entry per registered name, from the stage that names it on the way out.
        unclaimed = [
            s for s in self.stages if isinstance(s, PrefixStage) and s.inverse_for == "unclaimed"
        ]
        for name in registered:
            out = self.outbound(name)
            decider = out.stage
            if decider is not None and decider.reverse == "none":
                continue
            how = f"{decider.kind} {out.hit.rule}" if decider and out.hit else "no stage matched"
            where = out.hit.span if out.hit else None
            add(out.wire, ReverseEntry(name, how, where, identity=out.unchanged))
            if out.unchanged and decider is not None and decider.kind == "canonical":
                for prefix in unclaimed:
                    add(
                        prefix.value + name,
                        ReverseEntry(name, f"prefix '{prefix.value}'", prefix.span),
                    )

        for wire, entries in claims.items():
            if len(entries) == 1:  # uncontested, the common case: nothing to pick or report
                rmap.exact[wire] = entries[0][1]
                continue
            winner = _pick(entries)
            rmap.exact[wire] = winner
            distinct = list(dict.fromkeys(e.local for _w, e in entries))
            if len(distinct) > 1 and not all(
                e.explicit or e.identity for _w, e in entries if e.local != winner.local
            ):
                rmap.collisions.append(
                    Collision(
                        wire, tuple(distinct), winner.local, tuple(e.span for _w, e in entries)
                    )
                )
        if self._insensitive:
            folded_claims: dict[str, list[tuple[str, ReverseEntry]]] = {}
            for wire, entry in rmap.exact.items():
                folded_claims.setdefault(wire.lower(), []).append((wire, entry))
            for low, entries in folded_claims.items():
                if len(entries) == 1:
                    rmap.folded[low] = entries[0][1]
                    continue
                rmap.folded[low] = _pick(entries)
                distinct = list(dict.fromkeys(e.local for _w, e in entries))
                if len(distinct) > 1:
                    wires = [w for w, _e in entries]
                    rmap.collisions.append(
                        Collision(
                            "/".join(wires),
                            tuple(distinct),
                            rmap.folded[low].local,
                            tuple(e.span for _w, e in entries),
                            folded=True,
                        )
                    )
        return rmap

    # ------------------------------------------------------------ inbound
    def inbound(
        self, wire: str, registered: Iterable[str] | None, trace: list[InboundStep] | None = None
    ) -> str | None:
        if trace is None:
            found = self._inbound_fast(wire, self.fast_reverse(registered))
            if found is not None or self.gateway is None:
                return found
            return self._gateway(wire, registered, None)
        rmap = self.reverse_map(registered)
        found = self._lookup(rmap, wire, trace)
        if found is not None:
            return found
        for strip in self.strips:
            base = _without_suffix(strip, wire)
            if base is None:
                detail = f"no suffix {strip.suffix!r} ({strip.case} case)"
                trace.append(InboundStep("strip", wire, None, detail, strip.span))
                continue
            detail = f"stripped suffix {strip.suffix!r}"
            trace.append(InboundStep("strip", wire, base, detail, strip.span))
            found = self._lookup(rmap, base, trace)
            if found is not None:
                return found
        return self._gateway(wire, registered, trace)

    def _gateway(
        self, wire: str, registered: Iterable[str] | None, trace: list[InboundStep] | None
    ) -> str | None:
        """Undo what a gateway did to a name that did not map (``inbound.strip_prefixes``,
        ``collapse_doubled_prefixes``, ``match_registered``); each shorter name is looked up
        again from the start, so strips compose."""
        gateway = self.gateway
        if gateway is None:
            return None
        for candidate, detail, span in gateway.candidates(wire):
            if trace is not None:
                trace.append(InboundStep("gateway", wire, candidate, detail, span))
            found = self.inbound(candidate, registered, trace)
            if found is not None:
                return found
        names = self._known_locals if registered is None else tuple(registered)
        found = gateway.registered(wire, names)
        for strip in self.strips if found is None else ():
            if strip.suffix and wire.endswith(strip.suffix) and len(wire) > len(strip.suffix):
                found = gateway.registered(wire[: -len(strip.suffix)], names)
                if found is not None:
                    break
        if trace is not None and gateway.match_registered != "none":
            how = f"compared with the registered names ({gateway.match_registered} case)"
            trace.append(InboundStep("gateway", wire, found, how, gateway.span))
        return found

    def _inbound_fast(self, wire: str, fast: FastReverse) -> str | None:
        """:meth:`inbound` without a trace: dictionary lookups over the winners."""
        found = self._lookup_fast(fast, wire)
        if found is not None:
            return found
        for strip in self.strips:
            base = _without_suffix(strip, wire)
            if base is not None:
                found = self._lookup_fast(fast, base)
                if found is not None:
                    return found
        return None

    def _lookup_fast(self, fast: FastReverse, name: str) -> str | None:
        local = fast.exact.get(name)
        if local is not None:
            return local
        if self._insensitive:
            local = fast.folded.get(name.lower())
            if local is not None:
                return local
        for stage in self._prefix_strips:
            stripped = stage.strip(name)
            if stripped is not None:
                return stripped
        return None

    def _lookup(self, rmap: ReverseMap, name: str, trace: list[InboundStep] | None) -> str | None:
        entry = rmap.exact.get(name)
        if entry is not None:
            if trace is not None:
                trace.append(
                    InboundStep(
                        "exact", name, entry.local, f"reverse entry from {entry.source}", entry.span
                    )
                )
            return entry.local
        if trace is not None:
            trace.append(InboundStep("exact", name, None, "no reverse entry"))
        if self._insensitive:
            entry = rmap.folded.get(name.lower())
            if entry is not None:
                if trace is not None:
                    trace.append(
                        InboundStep(
                            "case-insensitive",
                            name,
                            entry.local,
                            f"reverse entry from {entry.source}",
                            entry.span,
                        )
                    )
                return entry.local
            if trace is not None:
                trace.append(
                    InboundStep("case-insensitive", name, None, "no reverse entry ignoring case")
                )
        for stage in self._prefix_strips:
            stripped = stage.strip(name)
            if stripped is not None:
                if trace is not None:
                    trace.append(
                        InboundStep(
                            "prefix-strip",
                            name,
                            stripped,
                            f"stripped prefix {stage.value!r}",
                            stage.span,
                        )
                    )
                return stripped
        return None


def _without_suffix(strip: Strip, wire: str) -> str | None:
    """``wire`` less the strip's suffix (in the strip's case rule), or None when it has none."""
    if strip.case == "exact":
        hit = wire.endswith(strip.suffix)
    else:
        hit = wire.lower().endswith(strip.suffix.lower())
    if not hit or len(wire) == len(strip.suffix):
        return None
    return wire[: len(wire) - len(strip.suffix)]


def _pick(entries: list[tuple[str, ReverseEntry]]) -> ReverseEntry:
    """Who wins a contested wire name.

    A tool registered under the wire name itself, then an explicit inverse, then the first.
    """
    for _wire, entry in entries:
        if entry.identity:
            return entry
    for _wire, entry in entries:
        if entry.explicit:
            return entry
    return entries[0][1]
