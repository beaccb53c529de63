"""``explain TOOL --schema``: a tool's schema before and after conversion, and why.

The schema is the one the rules know for the tool (the local pin's, else the
Claude Code pin's), or one the caller supplies; it goes through the same two steps
as a request's tool (:func:`bridge_rules.calls.bound_schema`, then the rule set's
conversion), so what this shows is what a request would send.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from bridge_rules.calls import bound_schema
from bridge_rules.runtime import Runtime
from bridge_rules.schemas import Conversion


@dataclass(frozen=True)
class SchemaView:
    tool: str
    source: str
    target: str | None
    operations: tuple[str, ...]
    local: Any
    bound: Any
    conversion: Conversion
    setting: str | None = None
    """Where the rules' ``schemas:`` was written (None: the default target)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "source": self.source,
            "target": self.target,
            "operations": list(self.operations),
            "setting": self.setting,
            "before": self.local,
            "bound": None if self.bound is self.local else self.bound,
            "after": self.conversion.schema,
            "changes": [
                {"rule": c.rule, "pointer": c.pointer, "detail": c.detail}
                for c in self.conversion.changes
            ],
            "arguments_change": not self.conversion.shape.identity,
        }

    def render_text(self) -> str:
        target = self.target or "none (operations only)"
        where = f" [{self.setting}]" if self.setting else " (the default)"
        lines = [f"schema of {self.tool} ({self.source}), target {target}{where}"]
        lines.append("before:")
        lines.extend("  " + line for line in _dump(self.local))
        if self.bound is not self.local:
            lines.append("as the binding advertises it:")
            lines.extend("  " + line for line in _dump(self.bound))
        if not self.conversion.changes:
            lines.append("after: unchanged (the target accepts it)")
            return "\n".join(lines) + "\n"
        lines.append("after:")
        lines.extend("  " + line for line in _dump(self.conversion.schema))
        lines.append("why:")
        lines.extend(f"  {change}" for change in self.conversion.changes)
        if not self.conversion.shape.identity:
            lines.append("calls to it are restored to the shape above before the agent sees them")
        return "\n".join(lines) + "\n"


def _dump(schema: Any) -> list[str]:
    return json.dumps(schema, indent=2, ensure_ascii=False).splitlines()


def known_schema(rt: Runtime, tool: str) -> tuple[Any, str] | None:
    """The schema the rules' pins give ``tool``, with where it came from."""
    for pin in (rt.rules.local_pin, rt.rules.pin):
        if pin is not None and (schema := pin.schema(tool)) is not None:
            return schema, pin.spec
    return None


def schema_view(rt: Runtime, tool: str, schema: Any, source: str) -> SchemaView:
    bound = bound_schema(rt, tool, schema)
    profile = rt.rules.schemas
    return SchemaView(
        tool,
        source,
        profile.target,
        profile.operations,
        schema,
        bound,
        rt.schema_book.conversion(bound),
        None if rt.rules.schemas_span is None else str(rt.rules.schemas_span),
    )
