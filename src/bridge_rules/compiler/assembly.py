"""The :class:`~bridge_rules.runtime.Runtime` assembled from compiled rules: effective
adapters and every known local name's history plan, precomputed.

Kept apart from the compiling so that a ``serve`` route's other target
(:func:`retargeted`) rebuilds a runtime without compiling the rules again.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from bridge_rules.bindings.adapter import Adapter, history_converter
from bridge_rules.compiled import CompiledRules
from bridge_rules.names import Resolver
from bridge_rules.policy import NO_POLICY, CompiledPolicy
from bridge_rules.repair.rules import RepairSet
from bridge_rules.runtime import Adapters, Converter, HistoryPlan, Runtime
from bridge_rules.schemas import profile


def retargeted(rt: Runtime, target: str) -> Runtime:
    """These rules converting tool schemas for another target (a ``serve`` route's
    ``target:``), their operations and ``ref_depth`` otherwise as written."""
    written = rt.rules.schemas
    own = profile(written.target).operations
    extra = tuple(op for op in written.operations if op not in own)
    chosen = profile(None if target == "none" else target, extra)
    schemas = dataclasses.replace(chosen, ref_depth=rt.rules.schemas.ref_depth)
    rules = dataclasses.replace(rt.rules, schemas=schemas)
    return build_runtime(rules, rt.plan, rt.policy).with_sealer(rt.sealer)


def build_runtime(rules: CompiledRules, plan: Any, policy: CompiledPolicy = NO_POLICY) -> Runtime:
    """Precompute what requests need: effective adapters and every known name's history plan."""
    resolver = Resolver(
        stages=rules.stages,
        strips=rules.strips,
        insensitive=rules.inbound_case == "insensitive",
        local_tools=(name for name, _span in rules.local_tools),
        gateway=rules.gateway,
        guard=rules.wire_names,
    )
    effective: dict[str, Adapter] = {
        local: adapter
        for local, adapter in rules.adapters.items()
        if resolver.outbound(local).wire == adapter.wire
    }
    history: dict[str, HistoryPlan] = {}
    for local in dict.fromkeys([*resolver.known_locals, *rules.adapters, *rules.repairs.internal]):
        adapter = effective.get(local)
        convert = history_converter(adapter)
        history[local] = (resolver.outbound(local).wire, _scrubbed(rules.repairs, local, convert))
    folded = any(s.kind == "bindings" and s.case == "insensitive" for s in rules.stages)
    return Runtime(
        rules=rules,
        resolver=resolver,
        gate=rules.gate,
        plan=plan,
        policy=policy,
        adapters=Adapters(effective, folded),
        repairs=rules.repairs,
        history=history,
    )


def _scrubbed(repairs: RepairSet, local: str, convert: Converter | None) -> Converter | None:
    """History replay never sends what repair recorded for itself (internal keys)."""
    if local not in repairs.internal:
        return convert

    def run(arguments: Any) -> Any:
        clean = repairs.scrub(local, arguments)
        return convert(clean) if convert is not None else clean

    return run
