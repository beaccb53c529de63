"""The binding section of ``explain``: operations with file:line, and optionally the
arguments after each one (produced by the same steps the runtime runs)."""

from __future__ import annotations

import json
from typing import Any

from bridge_rules.bindings.adapter import Adapter
from bridge_rules.steps import Step


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=False)


def binding_section(
    adapter: Adapter | None, repairs: tuple[Step, ...], args: Any = None, traced: bool = False
) -> dict[str, Any]:
    steps = [*(adapter.steps if adapter else ()), *repairs]
    lines: list[str] = []
    if adapter is not None:
        b = adapter.binding
        lines.append(f"{b.local} <-> {b.wire} (schema {b.schema_}) [{adapter.span}]")
        lines.append(f"history: {adapter.history_mode}" + (" (lossy)" if adapter.lossy else ""))
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
    return {
        "binding": None if adapter is None else {"local": adapter.local, "wire": adapter.wire},
        "operations": [s.to_dict() for s in steps],
        "arguments": {"in": args, "after": after} if traced else None,
        "text": "\n".join(lines),
    }
