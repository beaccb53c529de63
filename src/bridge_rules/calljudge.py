"""One policy decision per call, on every name the call can stand for.

A call comes back under a wire name ``W`` and reaches the agent under a name ``N`` (what
the rules map ``W`` back to for this request, or ``W`` itself). Judging ``N`` alone is not
enough: a tool the policy took out of ``tools[]`` is not registered, so a call to it maps
to nothing and reaches the agent under ``W`` (``Bash``), which an agent that folds case
runs as its own ``bash``. So a call is denied when the policy denies any of:

* ``W`` itself (``deny`` patterns and switches are matched against it);
* every local name the rules can map ``W`` to, whether or not that tool was in the
  request, and every local name ``W`` spells in another case (``FIND`` for ``find``):
  the claims of every rule on ``W`` (reverse entries, case-folded ones), and on
  what ``inbound.strip_suffixes``, the gateway's strips and the ``kind: prefix`` stages
  leave of it (each stripped without regard to case), over the local names the rules know
  and every tool the request sent, those the policy took out included;
* the name the agent receives, ``N``, and the one it runs: for an agent whose
  ``inbound.agent_dispatch`` is ``lowercase`` (opencode), every name above lower-cased
  too. When ``N`` is ``W`` (nothing mapped it), ``W`` is judged as a tool of the agent
  as well.

Each local name ``L`` is judged as the policy judges a tool of ``tools[]``: by ``L`` and its
wire name. The candidates of a wire name depend on the rules alone, so they are computed
once per name and remembered; the request's own tools are indexed once per set of tools
(:meth:`CallJudge.for_request`, kept for the sets seen last), with the verdict for each
(``W``, ``N``) pair: a request pays a dict lookup per call.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable

from bridge_rules.compiled import CompiledRules
from bridge_rules.names import Resolver
from bridge_rules.policy import ALLOWED, CompiledPolicy, Decision
from bridge_rules.stages import PrefixStage, TableStage

MAX_MEMO = 4096
"""Names and pairs remembered per rule set: the same bound as the policy's own memo."""
_MAX_FORMS = 64
"""Stripped forms of one name looked at, at most (a name of 64 characters has few)."""
_SETS = 64
"""Sets of request tools whose index is kept (agents send the same few sets)."""

Index = tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]
"""Wire name -> the local names that claim it, as written and lower-cased."""


class CallJudge:
    """What the rules alone say of a call's names; :meth:`for_request` adds a request's tools."""

    def __init__(self, resolver: Resolver, rules: CompiledRules, policy: CompiledPolicy) -> None:
        self.resolver = resolver
        self.rules = rules
        self.policy = policy
        self.folds = rules.agent_dispatch == "lowercase"
        self._prefixes = tuple(s for s in rules.stages if isinstance(s, PrefixStage) and s.value)
        self._index_built: Index | None = None
        self._lock = threading.Lock()
        self._forms: dict[str, tuple[tuple[str, bool], ...]] = {}
        self._requests: OrderedDict[tuple[str, ...], RequestJudge] = OrderedDict()
        self._last: tuple[tuple[str, ...], RequestJudge] | None = None

    @property
    def active(self) -> bool:
        return self.policy.active

    def for_request(self, tools: Iterable[str] = ()) -> RequestJudge:
        """The judge of one request's calls: ``tools`` are the local names of every tool it
        sent, those the policy took out included."""
        key = tools if type(tools) is tuple else tuple(tools)
        last = self._last
        if last is not None and last[0] == key:  # agents send the same tools each turn
            return last[1]
        with self._lock:
            found = self._requests.get(key)
            if found is not None:
                self._requests.move_to_end(key)
                self._last = (key, found)
                return found
        found = RequestJudge(self, self._claims(key))
        self._last = (key, found)
        with self._lock:
            self._requests[key] = found
            if len(self._requests) > _SETS:
                self._requests.popitem(last=False)
        return found

    def decide(self, wire: str, delivered: str | None = None) -> Decision:
        """:meth:`RequestJudge.decide` for a request that sent no tools of its own."""
        return self.for_request(()).decide(wire, delivered)

    # ------------------------------------------------------------------ names
    def forms(self, wire: str) -> tuple[tuple[str, bool], ...]:
        """``wire`` and what every inbound strip leaves of it, strips composed; each with
        whether a prefix stage's inverse made it (then it is a local name as it is)."""
        found = self._forms.get(wire)
        if found is None:
            found = self._find_forms(wire)
            if len(self._forms) < MAX_MEMO:
                self._forms[wire] = found
        return found

    def _find_forms(self, wire: str) -> tuple[tuple[str, bool], ...]:
        seen: dict[str, bool] = {wire: False}
        todo = [wire]
        gateway = self.rules.gateway
        while todo and len(seen) < _MAX_FORMS:
            name = todo.pop()
            low = name.lower()
            under = seen[name]  # what a prefix stage's inverse left stays a local name
            shorter: list[tuple[str, bool]] = []
            for strip in self.rules.strips:
                suffix = strip.suffix.lower()
                if suffix and low.endswith(suffix) and len(name) > len(suffix):
                    shorter.append((name[: -len(suffix)], under))
            shorter += [(c, under) for c, _what, _span in gateway.candidates(name)]
            for stage in self._prefixes:
                value = stage.value.lower()
                if len(name) > len(value) and low.startswith(value):
                    shorter.append((name[len(value) :], True))
            for form, by_prefix in shorter:
                if form not in seen:
                    seen[form] = by_prefix
                    todo.append(form)
                elif by_prefix:
                    seen[form] = True
        return tuple(seen.items())

    def index(self) -> Index:
        """The claims over every local name the rules know (their tables, bindings,
        ``local_tools`` and the local pin's tools, with the tables' inverse entries): built
        on first use."""
        if self._index_built is not None:
            return self._index_built
        rules = self.rules
        known: dict[str, None] = dict.fromkeys(self.resolver.known_locals)
        if rules.local_pin is not None:  # the agent's own tools (``pin`` is the wire's)
            known.update(dict.fromkeys(rules.local_pin.tools))
        known.update(dict.fromkeys(rules.bindings))
        extra = [
            (wire, local)
            for stage in rules.stages
            if isinstance(stage, TableStage)
            for wire, (local, _span) in stage.inverse.items()
        ]
        built = self._claims(tuple(known), extra)
        self._index_built = built
        return built

    def _claims(self, locals_: tuple[str, ...], extra: Iterable[tuple[str, str]] = ()) -> Index:
        exact: dict[str, dict[str, None]] = {}
        for local in locals_:
            exact.setdefault(self.resolver.outbound(local).wire, {})[local] = None
        for wire, local in extra:
            exact.setdefault(wire, {})[local] = None
        folded: dict[str, dict[str, None]] = {}
        for wire, found in exact.items():
            folded.setdefault(wire.lower(), {}).update(found)
        for local in locals_:  # a call spelt as a local name in another case may mean it
            folded.setdefault(local.lower(), {})[local] = None
        return (
            {k: tuple(v) for k, v in exact.items()},
            {k: tuple(v) for k, v in folded.items()},
        )


class RequestJudge:
    """The policy's decision on the calls of one request's answers, memoised per pair."""

    def __init__(self, judge: CallJudge, own: Index) -> None:
        self.judge = judge
        self.policy = judge.policy
        self._own = own
        self._candidates: dict[str, tuple[str, ...]] = {}
        self._memo: dict[tuple[str, str], Decision] = {}

    def decide(self, wire: str, delivered: str | None = None) -> Decision:
        """The decision on a call that came as ``wire`` and reaches the agent as
        ``delivered`` (None: as ``wire``)."""
        got = wire if delivered is None else delivered
        key = (wire, got)
        found = self._memo.get(key)
        if found is None:
            found = self._decide(wire, got)
            if len(self._memo) < MAX_MEMO:
                self._memo[key] = found
        return found

    def decide_all(self, wires: Iterable[str], delivered: str) -> Decision:
        """The first denial among the calls that came as any of ``wires`` (or as
        ``delivered`` itself) and reach the agent as ``delivered``."""
        for wire in wires:
            found = self.decide(wire, delivered)
            if not found.allowed:
                return found
        return self.decide(delivered, delivered)

    def names(self, wire: str, delivered: str) -> tuple[str, ...]:
        """The local names a call is judged under (see the module's list)."""
        found = dict.fromkeys(self.candidates(wire))
        found[delivered] = None
        if delivered == wire:
            found[wire] = None
        if self.judge.folds:  # any of them may be what the agent gets, and it folds it
            found.update(dict.fromkeys([name.lower() for name in found]))
        return tuple(found)

    def candidates(self, wire: str) -> tuple[str, ...]:
        """Every local name the rules can map ``wire`` to, registered or not."""
        found = self._candidates.get(wire)
        if found is None:
            out: dict[str, None] = {}
            indexes = (self.judge.index(), self._own)
            for form, by_prefix in self.judge.forms(wire):
                if by_prefix:
                    out[form] = None  # what a prefix stage's inverse gives back as it is
                low = form.lower()
                for exact, folded in indexes:
                    out.update(dict.fromkeys(exact.get(form, ())))
                    out.update(dict.fromkeys(folded.get(low, ())))
            found = tuple(out)
            if len(self._candidates) < MAX_MEMO:
                self._candidates[wire] = found
        return found

    def _decide(self, wire: str, delivered: str) -> Decision:
        policy = self.policy
        outbound = self.judge.resolver.outbound
        pairs = [(name, outbound(name).wire) for name in self.names(wire, delivered)]
        every = (wire, *(n for pair in pairs for n in pair))
        rule = policy.deny_rule(every)
        if rule is not None:
            return Decision(False, rule)
        first: Decision | None = None
        for local, sent in pairs:
            decision = policy.decide(local, sent)
            if not decision.allowed:
                return decision
            if first is None or first.rule is None:
                first = decision
        return first or ALLOWED
