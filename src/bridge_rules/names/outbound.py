"""Outbound resolution: the first stage that matches decides the wire name.

:func:`decide` is the only code that resolves a local name; the resolver memoises
its answers, and ``explain`` hands it a tracer to see the same decision written down.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bridge_rules.names.trace import Tracer
from bridge_rules.schemas import DEFAULT_TARGET, name_letter_first, name_problem
from bridge_rules.stageindex import StageIndex
from bridge_rules.stages import CompiledStage, Hit, NameGuard
from bridge_rules.wirenames import name_problems as wire_name_problems
from bridge_rules.wirenames import shorten


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


def name_problems(wire: str, guard: NameGuard) -> list[str]:
    """Every reason the API (within the rules' length limit) or the rules' target refuses
    ``wire`` as a tool name (phrases after "name X"); empty when both take it."""
    reasons = wire_name_problems(wire, guard.max_length)
    target = guard.target
    if not reasons and target is not None and target != DEFAULT_TARGET:
        problem = name_problem(target, wire)
        if problem is not None:
            reasons = [problem]
    return reasons


def decide(
    name: str,
    stages: Sequence[CompiledStage],
    index: StageIndex,
    guard: NameGuard | None,
    tracer: Tracer | None,
) -> Outbound:
    """The wire name for ``name``: the index finds the first stage that matches (the
    stages in order, without asking each in turn), then the ``shorten`` guard, if on,
    replaces a name the API would refuse with a valid one that maps back."""
    found = index.first(name)
    if tracer is not None:
        tracer.decided(name, stages, found)
    if found is None:
        result = Outbound(name, name, None, None)
    else:
        result = Outbound(name, found[1].wire, stages[found[0]], found[1])
    if guard is None or not name_problems(result.wire, guard):  # decided once a name: memoised
        return result
    short = shorten(result.wire, guard.max_length, letter_first=name_letter_first(guard.target))
    if tracer is not None:
        tracer.shortened(result.wire, short, guard, len(stages))
    return Outbound(name, short, result.stage, result.hit)
