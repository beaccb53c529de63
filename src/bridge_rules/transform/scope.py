"""What mapping one response's calls back needs of its request: a :class:`CallScope`.

Every inbound pass of a response (the message walk, text recovery, the stream's call
pass and second pass, the unmapped policy) reads the same things of the request it
answers: the rules, the local names of the tools it sent, the seals that give a
repaired call its id, the report the caller reads afterwards, and the schema
conversions its calls cross. :class:`~bridge_rules.transform.turn.Turn` makes one per
request; a library caller that rewrites a lone message gets one from
:meth:`CallScope.of`. It is made once and only read, except for the report it fills.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from bridge_rules.calljudge import RequestJudge
from bridge_rules.calls import ToolCall, inbound_call
from bridge_rules.runtime import Runtime
from bridge_rules.schemas.book import Shapes
from bridge_rules.transform.report import InboundReport
from bridge_rules.transform.results import CallSealer


@dataclass(frozen=True, eq=False)
class CallScope:
    """One response's calls, as its request scopes them."""

    rt: Runtime
    registered: tuple[str, ...] | None = None
    """The local names of the tools the request sent: the reverse map is scoped to them
    (None: every local name the rules know)."""
    sealer: CallSealer | None = None
    """Gives each call, once adapted, the id it goes back with (see
    :class:`~bridge_rules.transform.results.CallSealer`)."""
    report: InboundReport | None = None
    """Receives the names mapped back, and the unmapped and denied calls."""
    shapes: Shapes | None = None
    """The request's schema conversions (``OutboundResult.shapes``), so calls come back
    in the agent's shape."""
    mapping: bool = True
    """Whether the rules map the answer's calls back (the gate is open). False: the calls
    keep their names and arguments, and only the policy judges them."""
    sent: tuple[str, ...] | None = None
    """The local names of every tool the request sent, those the filters and the policy
    took out included (None: ``registered``): a call is judged as any of them it can
    stand for."""
    wires: dict[str, list[str]] = field(default_factory=dict)
    """Name given to the agent -> the wire names it was mapped back from in this answer, so
    the policy judges a call by both (:mod:`bridge_rules.calljudge`)."""

    @classmethod
    def of(
        cls,
        rt: Runtime,
        registered: Iterable[str] | None = None,
        sealer: CallSealer | None = None,
        report: InboundReport | None = None,
        shapes: Shapes | None = None,
    ) -> CallScope:
        """A scope from any iterable of registered names (read once, here)."""
        return cls(rt, None if registered is None else tuple(registered), sealer, report, shapes)

    @cached_property
    def judge(self) -> RequestJudge:
        """The policy's decisions on this answer's calls (:mod:`bridge_rules.calljudge`)."""
        tools = self.sent if self.sent is not None else self.registered
        return self.rt.judge.for_request(tools or ())

    @cached_property
    def known(self) -> frozenset[str]:
        """The local names a call may map to."""
        return frozenset(self.rt.known_locals if self.registered is None else self.registered)

    def call(self, wire: str, arguments: Any) -> ToolCall:
        """The call to ``wire`` in local terms: its name mapped back, its arguments adapted."""
        if not self.mapping:
            return ToolCall(wire, arguments, {})
        call = inbound_call(self.rt, wire, arguments, self.registered, self.shapes)
        if call.name != wire:
            self._came(wire, call.name)
        return call

    def local_name(self, wire: str) -> str | None:
        """The local name ``wire`` maps back to, or None."""
        if not self.mapping:
            return None
        local = self.rt.inbound_name(wire, self.registered)
        if local is not None and local != wire:
            self._came(wire, local)
        return local

    def _came(self, wire: str, local: str) -> None:
        seen = self.wires.get(local)
        if seen is None:
            self.wires[local] = [wire]
        elif wire not in seen:
            seen.append(wire)

    def seal(self, ident: Any, call: ToolCall) -> Any:
        """The id ``call`` goes back with: ``ident`` unless the sealer gives it another."""
        if self.sealer is None or not isinstance(ident, str):
            return ident
        return self.sealer.seal(ident, call)

    def renamed(self, wire: str, local: str) -> None:
        """Note a call whose name was mapped back."""
        if self.report is not None:
            self.report.rename(wire, local)
