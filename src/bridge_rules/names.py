"""Name resolution at run time, both ways, with an optional trace.

Outbound: the first stage that matches decides (memoised per name, so after
the first call a resolution is one dict lookup). Inbound: a reverse map built
for a set of registered local names (cached per set), looked up exactly, then
case-insensitively, then with prefix and suffix strips, as the rules say.

The trace is produced by the same code path that serves real traffic:
``explain`` renders it; there is no second resolver.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from bridge_rules.source import Span
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
        self.strips = tuple(strips)
        self.gateway = gateway if gateway is not None and gateway.active else None
        self._memo: dict[str, Outbound] = {}
        self._reverse: OrderedDict[tuple[str, ...], ReverseMap] = OrderedDict()
        self._reverse_cache_size = reverse_cache_size
        self._prefix_strips = [
            s for s in self.stages if isinstance(s, PrefixStage) and s.reverse == "always"
        ]
        self._insensitive = insensitive
        # The local names the rules know; what `registered=None` means. Rules never change.
        known = dict.fromkeys(local_tools)
        for stage in self.stages:
            known.update(dict.fromkeys(stage.local_names()))
        self._known_locals: tuple[str, ...] = tuple(known)

    # ----------------------------------------------------------- outbound
    def outbound(self, name: str, trace: list[StageStep] | None = None) -> Outbound:
        if trace is None:
            cached = self._memo.get(name)
            if cached is not None:
                return cached
        result = Outbound(name, name, None, None)
        for stage in self.stages:
            hit = stage.match(name)
            if hit is None:
                if trace is not None:
                    trace.append(
                        StageStep(
                            stage.index,
                            stage.id,
                            stage.kind,
                            False,
                            stage.why_not(name),
                            stage.span,
                        )
                    )
                continue
            if trace is not None:
                detail = f"matched {hit.rule} -> {hit.wire!r}"
                trace.append(StageStep(stage.index, stage.id, stage.kind, True, detail, hit.span))
            result = Outbound(name, hit.wire, stage, hit)
            break
        if self.guard is not None and not is_valid(result.wire, self.guard.max_length):
            result = self._shortened(result, trace)
        if len(self._memo) < 65536:
            self._memo[name] = result
        return result

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

    def _build_reverse(self, registered: list[str]) -> ReverseMap:
        rmap = ReverseMap()
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
                    if stage.reverse == "registered" and local not in registered:
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
        rmap = self.reverse_map(registered)
        found = self._lookup(rmap, wire, trace)
        if found is not None:
            return found
        for strip in self.strips:
            if strip.case == "exact":
                hit = wire.endswith(strip.suffix)
            else:
                hit = wire.lower().endswith(strip.suffix.lower())
            if not hit or len(wire) == len(strip.suffix):
                if trace is not None:
                    trace.append(
                        InboundStep(
                            "strip",
                            wire,
                            None,
                            f"no suffix {strip.suffix!r} ({strip.case} case)",
                            strip.span,
                        )
                    )
                continue
            base = wire[: len(wire) - len(strip.suffix)]
            if trace is not None:
                trace.append(
                    InboundStep(
                        "strip", wire, base, f"stripped suffix {strip.suffix!r}", strip.span
                    )
                )
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
