"""What changed between two pinned Claude Code versions, and which rules each change touches.

Tools are matched by the d.ts interface behind them (recorded in each pin's
``interfaces``), so a rename such as ``Task`` -> ``Agent`` is reported as a
rename rather than a removal plus an addition; a removed tool that the newer
pin lists as an alias (``KillShell`` of ``TaskStop``) is reported as replaced.
Fields are compared as dotted paths (``todos[].activeForm``): added, removed,
required or not, type, enum values and structure (:mod:`bridge_rules.schemas.diff`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from bridge_rules.compiled import CompiledRules
from bridge_rules.pins import Pin
from bridge_rules.schemas.diff import changes as schema_changes
from bridge_rules.source import Span


@dataclass(frozen=True)
class Change:
    kind: str  # tool-added, tool-removed, tool-renamed, tool-replaced, field-added, ...
    tool: str
    detail: str
    field: str | None = None
    touches: tuple[tuple[str, Span], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "tool": self.tool,
            "field": self.field,
            "detail": self.detail,
            "touches": [{"rule": what, "location": str(span)} for what, span in self.touches],
        }


@dataclass
class DriftReport:
    old: Pin
    new: Pin
    changes: list[Change] = field(default_factory=list)
    checked_rules: bool = False
    """Whether the changes were checked against rules (``drift --rules``): only then does the
    text say how many touch them."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "from": self.old.spec,
            "to": self.new.spec,
            "changes": [c.to_dict() for c in self.changes],
        }

    @property
    def touched(self) -> bool:
        """Whether a change touches a tool the rules bind or pass through."""
        return any(c.touches for c in self.changes)

    def render_text(self) -> str:
        lines = [f"drift {self.old.spec} -> {self.new.spec}: {len(self.changes)} changes"]
        for change in self.changes:
            lines.append(f"  {change.kind:<15} {change.detail}")
            lines.extend(f"      touches {what} [{span}]" for what, span in change.touches)
        if self.checked_rules:
            touched = sum(1 for c in self.changes if c.touches)
            lines.append(f"{touched} of them touch the given rules")
        return "\n".join(lines) + "\n"


def _field_changes(tool: str, old: Any, new: Any) -> Iterator[Change]:
    for kind, name, detail in schema_changes(old, new):
        yield Change(kind, tool, f"{tool}.{detail}", name)


def compare(old: Pin, new: Pin) -> DriftReport:
    report = DriftReport(old, new)
    old_if, new_if = old.interfaces, new.interfaces
    by_iface = {iface: name for name, iface in new_if.items()}
    matched: dict[str, str] = {}
    for name in old.tools:
        if name in new.tools:
            matched[name] = name
        elif old_if.get(name) in by_iface and by_iface[old_if[name]] in new.tools:
            renamed = by_iface[old_if[name]]
            matched[name] = renamed
            report.changes.append(
                Change("tool-renamed", name, f"{name} renamed {renamed} ({old_if[name]})")
            )
    targets = set(matched.values())
    for name in old.tools:
        if name in matched:
            continue
        owner = next((t for t, aliases in new.aliases.items() if name in aliases), None)
        if owner is not None:
            detail = f"{name} removed; an alias of {owner} in {new.version}"
            report.changes.append(Change("tool-replaced", name, detail))
        else:
            report.changes.append(Change("tool-removed", name, f"{name} removed"))
    for name in new.tools:
        if name not in targets:
            report.changes.append(Change("tool-added", name, f"{name} added"))
    for before, after in matched.items():
        report.changes.extend(_field_changes(after, old.tools[before], new.tools[after]))
    if old.declared_only and new.declared_only:  # both pins know what their binary sends
        report.changes.extend(_sent_changes(matched, old, new))
    return report


def _sent_changes(matched: dict[str, str], old: Pin, new: Pin) -> Iterator[Change]:
    """Tools the binary sent in one version and only the type declarations list in the other:
    a ``from_pin`` canonical stage gains or loses them."""
    for before, after in matched.items():
        was, now = before in old.declared_only, after in new.declared_only
        if was and not now:
            yield Change("tool-sent", after, f"{after} sent by {new.version}, not only declared")
        elif now and not was:
            detail = f"{after} only declared in {new.version}: no capture saw it sent"
            yield Change("tool-declared", after, detail)


def _mentions(value: Any, name: str) -> bool:
    if isinstance(value, str):
        return value == name
    if isinstance(value, dict):
        return any(_mentions(k, name) or _mentions(v, name) for k, v in value.items())
    if isinstance(value, list):
        return any(_mentions(v, name) for v in value)
    return False


def touches(
    change: Change,
    rules: CompiledRules,
    old_name: str | None = None,
    outbound: Callable[[str], str] | None = None,
) -> list[tuple[str, Span]]:
    """The rules a change affects: names that mention the tool, bindings that use the field,
    and (given the rules' ``outbound`` name resolution) local tools that go out as it."""
    names = {change.tool} | ({old_name} if old_name else set())
    found: list[tuple[str, Span]] = []
    if outbound is not None:
        for local, span in rules.local_tools:
            wire = outbound(local)
            if wire in names and local not in rules.bindings:
                found.append((f"local tool '{local}' goes out as '{wire}'", span))
    for stage in rules.stages:
        table = getattr(stage, "entries", None) or getattr(
            getattr(stage, "table", None), "entries", None
        )
        for key, (wire, span) in (table or {}).items():
            if span == rules.pin_span and change.field is None:
                if key in names:
                    found.append((f"stage '{stage.id}' (canonical from the pin)", stage.span))
                continue
            if change.field is None and (key in names or wire in names):
                found.append((f"stage '{stage.id}' entry '{key}'", span))
    for compiled in rules.bindings.values():
        binding = compiled.binding
        if binding.wire not in names:
            continue
        if change.field is None:
            found.append((f"binding '{binding.local}'", compiled.span))
            continue
        leaf = change.field.rsplit(".", 1)[-1].removesuffix("[]")
        if _mentions(binding.model_dump(by_alias=True), leaf) or binding.schema_ == "canonical":
            found.append((f"binding '{binding.local}' ({binding.schema_} schema)", compiled.span))
        else:
            found.append((f"binding '{binding.local}' (binds {binding.wire})", compiled.span))
    return list(dict.fromkeys(found))


def drift(
    old: Pin,
    new: Pin,
    rules: CompiledRules | None = None,
    outbound: Callable[[str], str] | None = None,
) -> DriftReport:
    """Compare two pins; with ``rules``, attach to each change the rules it touches
    (``outbound``: the rules' name resolution, to find the tools they pass through)."""
    report = compare(old, new)
    if rules is None:
        return report
    annotated = []
    for change in report.changes:
        old_name = change.tool if change.kind == "tool-renamed" else None
        tool = change.detail.split(" renamed ")[1].split(" ")[0] if old_name else change.tool
        hits = touches(
            Change(change.kind, tool, change.detail, change.field), rules, old_name, outbound
        )
        annotated.append(Change(change.kind, change.tool, change.detail, change.field, tuple(hits)))
    report.changes = annotated
    report.checked_rules = True
    return report
