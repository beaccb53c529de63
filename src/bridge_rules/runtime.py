"""The compiled rule set as the request path sees it: one object, built once at load.

Everything a request needs is here, precomputed: the name resolver, the gate
with its pattern compiled, the text and filter plan, the binding adapters that
actually decide a tool's wire name, the repair steps, and the history-replay
plan of every local name the rules know. Nothing below compiles, parses or
walks rule models per request; the payload rewriters (:mod:`bridge_rules.transform`),
the call seam (:mod:`bridge_rules.calls`), ``explain`` and the proxy all take a
``Runtime``. :class:`bridge_rules.Engine` is only the public facade over one.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from bridge_rules.bindings.adapter import Adapter, history_converter
from bridge_rules.bindings.describe import Description, plan_description
from bridge_rules.bindings.output import OutputPlan
from bridge_rules.calljudge import CallJudge
from bridge_rules.compiled import CompiledRules
from bridge_rules.gate import CompiledGate, GateDecision, decide
from bridge_rules.msgcache import MessageCache
from bridge_rules.names import Resolver
from bridge_rules.policy import NO_POLICY, CompiledPolicy
from bridge_rules.repair.rules import NOTE_KEY, RepairSet
from bridge_rules.schemas.book import SchemaBook
from bridge_rules.sealing import Sealer
from bridge_rules.textplan import Plan


class Adapters(Mapping[str, Adapter]):
    """Binding adapters by local name; with a case-insensitive ``bindings`` stage, a local
    name that differs only in case finds its binding's adapter too (pi in its OAuth mode
    registers ``read`` as ``Read``, with pi's own schema). Both dicts are built at load."""

    def __init__(self, exact: Mapping[str, Adapter], insensitive: bool = False) -> None:
        self._exact = dict(exact)
        self._folded = {k.casefold(): v for k, v in exact.items()} if insensitive else {}

    def __getitem__(self, local: str) -> Adapter:
        found = self._exact.get(local)
        if found is None:
            found = self._folded.get(local.casefold()) if self._folded else None
        if found is None:
            raise KeyError(local)
        return found

    def get(self, local: str, default: Any = None) -> Any:  # the hot path: one dict lookup
        found = self._exact.get(local)
        if found is None and self._folded:
            found = self._folded.get(local.casefold())
        return default if found is None else found

    def __iter__(self) -> Iterator[str]:
        return iter(self._exact)

    def __len__(self) -> int:
        return len(self._exact)


Converter = Callable[[Any], Any]
HistoryPlan = tuple[str, Converter | None]
"""How a local call is replayed in history: its wire name and argument converter (None: as is)."""


@dataclass(frozen=True, kw_only=True, eq=False)
class Runtime:
    """Immutable after the compiler builds it; safe to share between threads and tasks.

    (The resolver memoises name resolutions; its caches only gain whole entries. The
    outbound message cache is keyed by bytes and belongs to this rule set alone, so
    loading new rules starts from an empty one.)
    """

    rules: CompiledRules
    resolver: Resolver
    gate: CompiledGate
    plan: Plan
    policy: CompiledPolicy = NO_POLICY
    """``policy:``: which tools pass, this rule set's and a request's switches
    (:meth:`narrowed`)."""
    adapters: Mapping[str, Adapter]
    """Binding adapters by local name, only where the binding is what names the tool on the
    wire (an earlier stage may win, and then the arguments must not be reshaped)."""
    repairs: RepairSet
    history: Mapping[str, HistoryPlan]
    sealer: Sealer | None = None
    """The deployment's key for ids that carry what a call's repair changed
    (:mod:`bridge_rules.sealing`). None: repairs that would need it (a stripped bash
    pipeline) are not made, so nothing has to travel between requests."""
    message_cache: MessageCache = field(default_factory=MessageCache.from_env, init=False)
    """Rewritten conversation messages by their bytes (see :mod:`bridge_rules.msgcache`).
    Every Runtime gets its own, ``dataclasses.replace`` included, so other rules never see
    these rewrites. Settings from ``BRIDGE_RULES_OUTBOUND_CACHE`` at load; ``.configure()``."""

    _narrowed: dict[tuple[str, ...], Runtime] = field(default_factory=dict, init=False)

    @functools.cached_property
    def schema_book(self) -> SchemaBook:
        """Tool schemas converted for ``schemas.target``, and how their calls come back."""
        return SchemaBook(self.rules.schemas)

    @functools.cached_property
    def judge(self) -> CallJudge:
        """The policy's decision on a call under every name it can stand for (made once)."""
        return CallJudge(self.resolver, self.rules, self.policy)

    @functools.cached_property
    def stripping_tools(self) -> frozenset[str]:
        """Local tools whose repairs strip a pipeline that the result must get applied."""
        return frozenset(k for k, keys in self.repairs.internal.items() if NOTE_KEY in keys)

    @functools.cached_property
    def descriptions(self) -> Mapping[str, Description]:
        """What each bound tool's description goes out as, by local name (docs/bindings.md)."""
        pin = self.rules.pin
        return {
            local: plan_description(
                a.binding.wire_description, a.binding.schema_, a.wire, pin, a.rename_fields
            )
            for local, a in self.adapters.items()
        }

    @functools.cached_property
    def outputs(self) -> Mapping[str, OutputPlan]:
        """Output operations by local name, where the description sent promises a shape the
        agent's results do not have (the wire tool's, or the rule's text); nowhere else."""
        return {
            local: a.output
            for local, a in self.adapters.items()
            if a.output is not None and self.descriptions[local].promises_output
        }

    def narrowed(self, switches: tuple[str, ...]) -> Runtime:
        """These rules with a request's policy switches on as well (``x-bridge-rules-policy``).

        Only ever narrower; raises :class:`~bridge_rules.policy.PolicyError` for a switch
        the rules do not define. One runtime per set of switches, made once and found again
        by the set (in any order, repeated or not), so a request pays a lookup: its caches
        are its own, since what its tools decide differs. Only sets of switches the rules
        define are kept, so there are at most 2**N of them."""
        key = tuple(sorted(set(switches)))
        found = self._narrowed.get(key)
        if found is None:
            policy = self.policy.narrowed(key)  # raises for a switch the rules lack
            made = self if policy is self.policy else dataclasses.replace(self, policy=policy)
            found = self._narrowed.setdefault(key, made)
        return found

    def with_sealer(self, sealer: Sealer | None) -> Runtime:
        """This rule set with another key (a new message cache: cached rewrites open ids)."""
        if sealer is self.sealer:
            return self
        return dataclasses.replace(self, sealer=sealer)

    @property
    def known_locals(self) -> tuple[str, ...]:
        """The local names the rules know: what ``registered=None`` means."""
        return self.resolver.known_locals

    def outbound_name(self, name: str) -> str:
        return self.resolver.outbound(name).wire

    def inbound_name(self, name: str, registered: Iterable[str] | None = None) -> str | None:
        return self.resolver.inbound(name, registered)

    def history_plan(self, local: str) -> HistoryPlan:
        """Precomputed for every known name; any other name only changes its name."""
        plan = self.history.get(local)
        if plan is None:
            adapter = self.adapters.get(local)  # a binding's local name in another case
            convert = history_converter(adapter)
            plan = (self.resolver.outbound(local).wire, convert)
        return plan

    def gate_decision(
        self, model: Mapping[str, Any] | None = None, env: Mapping[str, str] | None = None
    ) -> GateDecision:
        return decide(self.gate, model, os.environ if env is None else env)
