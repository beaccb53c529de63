"""Name resolution at run time, both ways, with an optional tracer.

Outbound: the first stage that matches decides (memoised per name, so after
the first call a resolution is one dict lookup). Inbound: a reverse map built
for a set of registered local names (cached per set), looked up exactly, then
case-insensitively, then with prefix and suffix strips, as the rules say.

Each direction is one code path. Given a :class:`~bridge_rules.names.trace.Tracer`
it also writes down what it decides, which is all ``explain`` prints; without one
it records nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from bridge_rules.names.outbound import Outbound, decide
from bridge_rules.names.reverse import ReverseMap, ReverseMaps, build
from bridge_rules.names.trace import Tracer
from bridge_rules.stageindex import StageIndex
from bridge_rules.stages import CompiledStage, Gateway, Hit, NameGuard, PrefixStage, Strip


class Resolver:
    """Outbound and inbound name resolution over compiled stages.

    Built once by the compiler. Its caches (outbound names, reverse maps per
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
        self._reverse = ReverseMaps(self._build_reverse, self._known_locals, reverse_cache_size)

    # ----------------------------------------------------------- outbound
    def outbound(self, name: str, tracer: Tracer | None = None) -> Outbound:
        """The wire name for ``name``. A tracer is shown every stage up to the decider, so
        a traced call decides afresh (the same way) rather than answering from the memo."""
        if tracer is None:
            cached = self._memo.get(name)
            if cached is not None:
                return cached
        result = decide(name, self.stages, self._index, self.guard, tracer)
        if len(self._memo) < self._memo_cap:
            self._memo[name] = result
        return result

    def first_hit(self, name: str, before: int) -> tuple[CompiledStage, Hit] | None:
        """The first of the stages before position ``before`` that decides ``name``."""
        found = self._index.first(name, before)
        return None if found is None else (self.stages[found[0]], found[1])

    # ------------------------------------------------------------ reverse
    @property
    def known_locals(self) -> tuple[str, ...]:
        return self._known_locals

    def winners(self, registered: Iterable[str] | None) -> ReverseMap:
        """The reverse map the request path reads for ``registered``, cached by the set."""
        return self._reverse.winners(registered)

    def reverse_map(self, registered: Iterable[str] | None) -> ReverseMap:
        """The same map with how each wire name was claimed, and its collisions."""
        return self._reverse.with_sources(registered)

    def _build_reverse(self, registered: tuple[str, ...], sources: bool) -> ReverseMap:
        return build(self.stages, registered, self.outbound, self._insensitive, sources)

    # ------------------------------------------------------------ inbound
    def inbound(
        self, wire: str, registered: Iterable[str] | None, tracer: Tracer | None = None
    ) -> str | None:
        """The local name ``wire`` comes back as, or None. A tracer needs the map's
        sources to say which rule each entry came from; the answers are the same."""
        if tracer is None:
            rmap = self._reverse.winners(registered)
        else:
            rmap = self._reverse.with_sources(registered)
        found = self._lookup(rmap, wire, tracer)
        if found is not None:
            return found
        for strip in self.strips:
            base = _without_suffix(strip, wire)
            if tracer is not None:
                tracer.suffix(wire, strip, base)
            if base is not None:
                found = self._lookup(rmap, base, tracer)
                if found is not None:
                    return found
        if self.gateway is None:
            return None
        return self._gateway(self.gateway, wire, registered, tracer)

    def _gateway(
        self,
        gateway: Gateway,
        wire: str,
        registered: Iterable[str] | None,
        tracer: Tracer | None,
    ) -> str | None:
        """Undo what a gateway did to a name that did not map (``inbound.strip_prefixes``,
        ``collapse_doubled_prefixes``, ``match_registered``); each shorter name is looked up
        again from the start, so strips compose."""
        for candidate, detail, span in gateway.candidates(wire):
            if tracer is not None:
                tracer.gateway_undo(wire, candidate, detail, span)
            found = self.inbound(candidate, registered, tracer)
            if found is not None:
                return found
        names = self._known_locals if registered is None else tuple(registered)
        found = gateway.registered(wire, names)
        for strip in self.strips if found is None else ():
            if strip.suffix and wire.endswith(strip.suffix) and len(wire) > len(strip.suffix):
                found = gateway.registered(wire[: -len(strip.suffix)], names)
                if found is not None:
                    break
        if tracer is not None and gateway.match_registered != "none":
            tracer.gateway_compared(wire, found, gateway)
        return found

    def _lookup(self, rmap: ReverseMap, name: str, tracer: Tracer | None) -> str | None:
        local = rmap.exact.get(name)
        if tracer is not None:
            tracer.looked_up("exact", name, None if local is None else rmap.entry(name))
        if local is not None:
            return local
        if self._insensitive:
            low = name.lower()
            local = rmap.folded.get(low)
            if tracer is not None:
                entry = None if local is None else rmap.entry(low, folded=True)
                tracer.looked_up("case-insensitive", name, entry)
            if local is not None:
                return local
        for stage in self._prefix_strips:
            stripped = stage.strip(name)
            if stripped is not None:
                if tracer is not None:
                    tracer.prefix_stripped(name, stripped, stage)
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
