"""The binding section of ``explain``: operations with file:line, the declared losses, and
optionally the arguments after each one and their replay (produced by the same steps the
runtime runs), with every difference from what was sent marked."""

from __future__ import annotations

import json
from typing import Any

from bridge_rules.bindings.adapter import Adapter
from bridge_rules.bindings.describe import Description
from bridge_rules.bindings.roundtrip import differences
from bridge_rules.steps import Step


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=False)


def binding_section(
    adapter: Adapter | None,
    repairs: tuple[Step, ...],
    args: Any = None,
    traced: bool = False,
    described: Description | None = None,
) -> dict[str, Any]:
    steps = [*(adapter.steps if adapter else ()), *repairs]
    lines: list[str] = []
    outputs: list[dict[str, Any]] = []
    if adapter is not None:
        b = adapter.binding
        lines.append(f"{b.local} <-> {b.wire} (schema {b.schema_}) [{adapter.span}]")
        lines.append(f"history: {adapter.history_mode}" + (" (lossy)" if adapter.lossy else ""))
        for loss, at in zip(b.losses, adapter.loss_spans, strict=True):
            lines.append(f"declared loss: {loss.describe()}  [{at}]")
        outputs = _outputs(adapter, described, lines)
    if traced:
        lines.append(f"arguments in: {_dump(args)}")
    work = dict(args) if isinstance(args, dict) else args
    after: list[Any] = []
    for index, step in enumerate(steps, 1):
        lines.append(f"{index}. {step.kind}: {step.text}  [{step.span}]")
        if traced and isinstance(work, dict):
            step.run(work)
            after.append(dict(work))
            lines.append(f"   -> {_dump(work)}")
    if not steps:
        lines.append("no binding or repair operations: arguments pass unchanged")
    trip = _round_trip(adapter, args, work, lines) if traced and adapter is not None else None
    return {
        "binding": None if adapter is None else {"local": adapter.local, "wire": adapter.wire},
        "operations": [s.to_dict() for s in steps],
        "losses": []
        if adapter is None
        else [
            {**loss.model_dump(), **at.to_dict()}
            for loss, at in zip(adapter.binding.losses, adapter.loss_spans, strict=True)
        ],
        "description": None if described is None else described.source,
        "output": outputs,
        "arguments": {"in": args, "after": after} if traced else None,
        "round_trip": trip,
        "text": "\n".join(lines),
    }


def _outputs(
    adapter: Adapter, described: Description | None, lines: list[str]
) -> list[dict[str, Any]]:
    """The description sent and the output operations, and whether they apply."""
    if described is not None:
        lines.append(f"description sent: {described.source}")
    plan = adapter.output
    if plan is None:
        return []
    applied = described is not None and described.promises_output
    for step in plan.steps:
        lines.append(f"output: {step.text}  [{step.span}]")
    if not applied:
        lines.append("output operations not applied: the agent's own description is sent")
    return [{"text": s.text, "applied": applied, **s.span.to_dict()} for s in plan.steps]


def _round_trip(adapter: Adapter, sent: Any, local: Any, lines: list[str]) -> dict[str, Any]:
    """The wire call history replay makes of ``local``, and how it differs from ``sent``."""
    replayed = adapter.to_wire(local)
    diffs = differences(adapter.binding.losses, "wire", sent, replayed)
    lines.append(f"local call: {_dump(local)}")
    lines.append(f"replayed:   {_dump(replayed)}")
    if not diffs:
        lines.append("round trip: exact")
    for diff in diffs:
        lines.append(f"  {'~' if diff.loss else '!'} {diff.describe()}")
    return {
        "local": local,
        "replayed": replayed,
        "exact": not diffs,
        "lawful": all(d.loss is not None for d in diffs),
        "differences": [d.to_dict() for d in diffs],
    }
