"""The trace of one tool's resolution, as data with a text and a JSON rendering.

Built from the steps the runtime records while resolving (the same
``names.Resolver`` that serves requests, given a ``names.Tracer``) and from the
compiled steps of the tool's binding and repairs; this module only arranges and
prints them. There is no second resolver.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from bridge_rules.bindings.explain import binding_section
from bridge_rules.names import Collision, InboundStep, StageStep, Tracer, name_problems
from bridge_rules.runtime import Runtime
from bridge_rules.source import escape

NO_ARGS: Any = object()
"""``explain_tool(..., args=NO_ARGS)``: no argument trace (``None`` is a JSON value to trace)."""


@dataclass(frozen=True)
class InboundCheck:
    wire: str
    local: str | None
    steps: list[InboundStep]

    def to_dict(self, tool: str) -> dict[str, Any]:
        return {
            "wire": self.wire,
            "local": self.local,
            "maps_back": self.local == tool,
            "steps": [s.to_dict() for s in self.steps],
        }


@dataclass
class Explanation:
    tool: str
    rules: str
    files: list[str]
    gate: str
    steps: list[StageStep]
    wire: str
    registered: list[str]
    inbound: list[InboundCheck]
    collisions: list[Collision]
    wire_problems: list[str] = field(default_factory=list)
    """Why the API (within the rules' ``wire_names.max_length``) or the rules' schema
    target would refuse the wire name; empty when it is valid."""
    sections: dict[str, Any] = field(default_factory=dict)
    """Extra sections other phases add (bindings, argument traces)."""

    @property
    def decided_by(self) -> StageStep | None:
        return next((s for s in self.steps if s.matched), None)

    @property
    def round_trip(self) -> bool:
        return bool(self.inbound) and self.inbound[0].local == self.tool

    def to_dict(self) -> dict[str, Any]:
        decided = self.decided_by
        return {
            "tool": self.tool,
            "rules": self.rules,
            "files": self.files,
            "gate": self.gate,
            "outbound": {
                "stages": [s.to_dict() for s in self.steps],
                "wire": self.wire,
                "decided_by": decided.to_dict() if decided else None,
            },
            "wire_name": {
                "name": self.wire,
                "length": len(self.wire),
                "valid": not self.wire_problems,
                "problems": self.wire_problems,
            },
            "inbound": {
                "registered": self.registered,
                "round_trip": self.round_trip,
                "checks": [c.to_dict(self.tool) for c in self.inbound],
            },
            "collisions": [
                {
                    "wire": c.wire,
                    "locals": list(c.locals),
                    "winner": c.winner,
                    "message": c.describe(),
                }
                for c in self.collisions
            ],
            **self.sections,
        }

    def render_text(self) -> str:
        lines = [f"{self.tool} -> {self.wire}", f"  rules: {self.rules} ({', '.join(self.files)})"]
        lines.append(f"  gate: {self.gate}")
        lines.append("  outbound, first match wins:")
        labels = [s.stage if s.stage == s.kind else f"{s.stage} ({s.kind})" for s in self.steps]
        width = max((len(label) for label in labels), default=8)
        for step, label in zip(self.steps, labels, strict=True):
            mark = "=>" if step.matched else "  "
            lines.append(
                f"   {mark} {step.index + 1}. {label:<{width}}  {step.detail}  [{step.span}]"
            )
        if self.decided_by is None:
            lines.append("   => no stage matched: the name goes out unchanged")
        problems = self.wire_problems
        verdict = "valid" if not problems else "INVALID: " + "; ".join(problems)
        lines.append(f"  wire name: {self.wire} ({len(self.wire)} chars, {verdict})")
        shown = (
            ", ".join(self.registered)
            if len(self.registered) <= 12
            else f"{len(self.registered)} names"
        )
        lines.append(f"  inbound (registered: {shown or 'none'}):")
        for check in self.inbound:
            verdict = (
                "maps back"
                if check.local == self.tool
                else (f"-> {check.local}" if check.local else "no mapping (left unchanged)")
            )
            lines.append(f"    {check.wire}: {verdict}")
            for back in check.steps:
                where = f"  [{back.span}]" if back.span else ""
                result = f" -> {back.result}" if back.result is not None else ""
                lines.append(f"      {back.action}: {back.detail}{result}{where}")
        for collision in self.collisions:
            lines.append(f"  collision: {collision.describe()}")
        for title, body in self.sections.items():
            if isinstance(body, dict) and "text" in body:
                lines.append(f"  {title}:")
                lines.extend(f"    {line}" for line in str(body["text"]).splitlines())
        # One entry a line: names with control characters are escaped (\n, \x1b) so a
        # name from a rule file or the command line cannot forge a line or a colour.
        return "\n".join(escape(line) for line in lines) + "\n"


def explain_tool(
    rt: Runtime, name: str, registered: Iterable[str] | None = None, args: Any = NO_ARGS
) -> Explanation:
    """The full trace for one tool: every stage, the wire name, the way back; with ``args``
    (wire-shaped), the arguments after each binding and repair operation."""
    outbound = Tracer()
    out = rt.resolver.outbound(name, outbound)
    names = list(rt.known_locals) if registered is None else list(registered)
    if registered is None and name not in names:
        names.append(name)
    checks = []
    variants = [out.wire, *(out.wire + s.suffix for s in rt.rules.strips)]
    variants += rt.rules.gateway.examples(out.wire, name)
    for wire in dict.fromkeys(variants):
        inbound = Tracer()
        local = rt.resolver.inbound(wire, names, inbound)
        checks.append(InboundCheck(wire, local, inbound.inbound))
    collisions = [
        c
        for c in rt.resolver.reverse_map(names).collisions
        if name in c.locals or c.wire == out.wire
    ]
    traced = args is not NO_ARGS
    section = binding_section(
        rt.adapters.get(name),
        rt.repairs.steps.get(name, ()),
        args if traced else None,
        traced,
        rt.descriptions.get(name),
    )
    sections: dict[str, Any] = {"arguments": section}
    if rt.policy.active:
        sections["policy"] = rt.policy.explain(name, out.wire)
    return Explanation(
        sections=sections,
        tool=name,
        rules=rt.rules.name,
        files=[f.doc.path for f in rt.rules.files],
        gate=rt.gate.describe(),
        steps=outbound.stages,
        wire=out.wire,
        registered=names,
        inbound=checks,
        collisions=collisions,
        wire_problems=name_problems(out.wire, rt.rules.wire_names),
    )
