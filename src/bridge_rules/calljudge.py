"""One policy decision per call, on every name the call can stand for.

A call comes back under a wire name ``W`` and reaches the agent under a name ``N`` (what
the rules map ``W`` back to for this request, or ``W`` itself). Judging ``N`` alone is not
enough: a tool the policy took out of ``tools[]`` is not registered, so a call to it maps
to nothing and reaches the agent under ``W`` (``Bash``), which an agent that folds case
runs as its own ``bash``. So a call is denied when the policy denies any of:

* ``W`` itself (``deny`` patterns and switches are matched against it);
* every local name the rules can map ``W`` to, whether or not that tool was in the
  request: the claims of every rule on ``W`` (reverse entries, case-folded ones), and on
  what ``inbound.strip_suffixes``, the gateway's strips and the ``kind: prefix`` stages
  leave of it (each stripped without regard to case);
* the name the agent receives, ``N``, and the one it runs: for an agent whose
  ``inbound.agent_dispatch`` is ``lowercase`` (opencode), ``N`` lower-cased too. When
  ``N`` is ``W`` (nothing mapped it), ``W`` is judged as a tool of the agent as well.

Each local name ``L`` is judged as the policy judges a tool of ``tools[]``: by ``L`` and its
wire name. The candidates of a wire name depend on the rules alone, so they are computed
once per name and remembered, like the verdict for each (``W``, ``N``) pair: a request
pays a dict lookup per call.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from bridge_rules.compiled import CompiledRules
from bridge_rules.names import Resolver
from bridge_rules.policy import ALLOWED, CompiledPolicy, Decision
from bridge_rules.stages import PrefixStage, TableStage

MAX_MEMO = 4096
"""Names and pairs remembered per rule set: the same bound as the policy's own memo."""
_MAX_FORMS = 64
"""Stripped forms of one name looked at, at most (a name of 64 characters has few)."""


class CallJudge:
    """The policy's decision on a call, given its wire name and the name the agent gets."""

    def __init__(self, resolver: Resolver, rules: CompiledRules, policy: CompiledPolicy) -> None:
        self.resolver = resolver
        self.rules = rules
        self.policy = policy
        self.folds = rules.agent_dispatch == "lowercase"
        self._prefixes = tuple(s for s in rules.stages if isinstance(s, PrefixStage) and s.value)
        self._exact: dict[str, tuple[str, ...]] | None = None
        self._folded: dict[str, tuple[str, ...]] = {}
        self._lock = threading.Lock()
        self._candidates: dict[str, tuple[str, ...]] = {}
        self._memo: dict[tuple[str, str], Decision] = {}

    @property
    def active(self) -> bool:
        return self.policy.active

    # ------------------------------------------------------------------ deciding
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
        """The first denial among the calls that came as any of ``wires`` and reach the
        agent as ``delivered``; allowed when none is denied."""
        for wire in wires:
            found = self.decide(wire, delivered)
            if not found.allowed:
                return found
        return self.decide(delivered, delivered)

    def names(self, wire: str, delivered: str) -> tuple[str, ...]:
        """The local names a call is judged under (see the module's list)."""
        found = dict.fromkeys(self.candidates(wire))
        found[delivered] = None
        if self.folds:
            found[delivered.lower()] = None
        if delivered == wire:
            found[wire] = None
        return tuple(found)

    def _decide(self, wire: str, delivered: str) -> Decision:
        policy = self.policy
        tools = self.names(wire, delivered)
        outbound = self.resolver.outbound
        pairs = [(name, outbound(name).wire) for name in tools]
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

    # ------------------------------------------------------------------ names
    def candidates(self, wire: str) -> tuple[str, ...]:
        """Every local name the rules can map ``wire`` to, registered or not."""
        found = self._candidates.get(wire)
        if found is None:
            found = self._find(wire)
            if len(self._candidates) < MAX_MEMO:
                self._candidates[wire] = found
        return found

    def _find(self, wire: str) -> tuple[str, ...]:
        exact, folded = self._index()
        out: dict[str, None] = {}
        for form, stripped in self._forms(wire):
            if stripped:
                out[form] = None  # what a prefix stage's inverse gives back as it is
            out.update(dict.fromkeys(exact.get(form, ())))
            out.update(dict.fromkeys(folded.get(form.lower(), ())))
        return tuple(out)

    def _forms(self, wire: str) -> list[tuple[str, bool]]:
        """``wire`` and what every inbound strip leaves of it, strips composed; each with
        whether a prefix stage's inverse made it."""
        seen: dict[str, bool] = {wire: False}
        todo = [wire]
        gateway = self.rules.gateway
        while todo and len(seen) < _MAX_FORMS:
            name = todo.pop()
            low = name.lower()
            shorter: list[tuple[str, bool]] = []
            for strip in self.rules.strips:
                suffix = strip.suffix.lower()
                if suffix and low.endswith(suffix) and len(name) > len(suffix):
                    shorter.append((name[: -len(suffix)], False))
            shorter += [(c, False) for c, _what, _span in gateway.candidates(name)]
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
        return list(seen.items())

    def _index(self) -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
        """Wire name -> the local names that claim it, as written and lower-cased, over
        every local name the rules know (their tables, bindings, ``local_tools`` and both
        pins' tools): built on first use."""
        if self._exact is not None:
            return self._exact, self._folded
        with self._lock:
            if self._exact is not None:
                return self._exact, self._folded
            exact: dict[str, dict[str, None]] = {}

            def claim(wire: str, local: str) -> None:
                exact.setdefault(wire, {})[local] = None

            rules = self.rules
            known: dict[str, None] = dict.fromkeys(self.resolver.known_locals)
            for pin in (rules.pin, rules.local_pin):
                if pin is not None:
                    known.update(dict.fromkeys(pin.tools))
            known.update(dict.fromkeys(rules.bindings))
            for local in known:
                claim(self.resolver.outbound(local).wire, local)
            for stage in rules.stages:
                if isinstance(stage, TableStage):
                    for wire, (local, _span) in stage.inverse.items():
                        claim(wire, local)
            folded: dict[str, dict[str, None]] = {}
            for wire, locals_ in exact.items():
                folded.setdefault(wire.lower(), {}).update(locals_)
            self._folded = {k: tuple(v) for k, v in folded.items()}
            self._exact = {k: tuple(v) for k, v in exact.items()}
        return self._exact, self._folded
