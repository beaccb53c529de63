"""What a request's ``tools[]`` decide: filters, the policy, wire names, schemas, descriptions.

A function of the tools and the rules alone (:func:`tools_outcome`), so one outcome serves
every request that sends the same tools (``transform.cached``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bridge_rules import mcpnames
from bridge_rules.calls import wire_conversion, wire_description
from bridge_rules.runtime import Runtime
from bridge_rules.schemas import Shape
from bridge_rules.textplan import Plan
from bridge_rules.transform.boundary import tool_denied
from bridge_rules.transform.guard import Verdict, wire_verdict
from bridge_rules.transform.references import uses_tool_search
from bridge_rules.transform.rewriter import Rewriter

_UNTYPED = ("", "custom")


def _is_typed(tool: Mapping[str, Any]) -> bool:
    kind = tool.get("type")
    return isinstance(kind, str) and kind not in _UNTYPED


def _filtered(name: str, plan: Plan, direct: set[str]) -> bool:
    if name in plan.drop or name.lower() in plan.deny_folded:
        return True
    if plan.dedup_bridged:
        tool = mcpnames.base(name)
        return tool is not None and tool in direct
    return False


def decide_tools(rw: Rewriter, tools: list[Any]) -> list[Any] | None:
    """The tools array rewritten (None: unchanged), noting on ``rw`` what it decided."""
    plan = rw.plan
    direct: set[str] = set()
    if plan.dedup_bridged:
        direct = {
            t["name"]
            for t in tools
            if isinstance(t, dict)
            and isinstance(t.get("name"), str)
            and not t["name"].startswith(mcpnames.PREFIX)
        }
    out: list[Any] = []
    changed = False
    filters = plan.filters_tools
    policy = rw.rt.policy if rw.rt.policy.active else None
    for tool in tools:
        name = tool.get("name") if isinstance(tool, dict) else None
        if filters and isinstance(name, str) and _filtered(name, plan, direct):
            rw.dropped.append(name)
            changed = True
            continue
        denial = None if policy is None else tool_denied(rw.rt, tool)
        if denial is not None:
            rw.dropped.append(denial[0])
            rw.denied[denial[0]] = denial[1]
            changed = True
            continue
        if not isinstance(name, str):
            out.append(tool)
            continue
        rw.registered.append(name)
        if _is_typed(tool):
            rw.typed.add(name)
            out.append(tool)
            continue
        wire = rw.wire(name)
        new_tool = tool
        if wire != name:
            new_tool = {**tool, "name": wire}
        if "input_schema" in tool:
            schema = tool["input_schema"]
            key, conversion = wire_conversion(rw.rt, name, schema)
            advertised = conversion.schema
            if not conversion.shape.identity:
                rw.shapes[name] = conversion.shape
                rw.shape_keys.append((name, key))
            if advertised is not schema and advertised != schema:
                new_tool = {**new_tool, "input_schema": advertised}
        if name in rw.rt.descriptions:
            said = tool.get("description")
            sent = wire_description(rw.rt, name, said)
            if sent != said:
                new_tool = {**new_tool, "description": sent}
        changed = changed or new_tool is not tool
        out.append(new_tool)
    return out if changed else None


@dataclass(frozen=True, slots=True, eq=False)
class ToolsOutcome:
    """What a request's ``tools[]`` decide: a function of them and the rules alone, so one
    outcome serves every request that sends the same tools (``transform.cached``)."""

    tools: list[Any] | None
    """The tools rewritten (None: sent as they are). Shares unchanged parts with the input."""
    registered: tuple[str, ...]
    typed: frozenset[str]
    dropped: tuple[str, ...]
    renames: tuple[tuple[str, str], ...]
    search: bool
    """Whether the history may hold ``tool_reference`` blocks (``uses_tool_search``)."""
    verdict: Verdict
    """What ``wire_names`` says of the tools as sent."""
    shapes: Mapping[str, Shape] = field(default_factory=dict)
    """How calls of the tools whose schema conversion changes them cross it: this request's
    own, handed to its answer (``Outcome.shapes``) and to its history replay."""
    shape_keys: tuple[tuple[str, bytes | None], ...] = ()
    """The same, named by each tool's schema bytes: part of the message cache's key."""
    denied: tuple[tuple[str, str], ...] = ()
    """Tools the policy took out, with the rule that did."""


def tools_outcome(rt: Runtime, tools: list[Any]) -> ToolsOutcome:
    rw = Rewriter(rt)
    new_tools = decide_tools(rw, tools)
    sent = tools if new_tools is None else new_tools
    return ToolsOutcome(
        new_tools,
        tuple(rw.registered),
        frozenset(rw.typed),
        tuple(rw.dropped),
        tuple(rw.renames.items()),
        uses_tool_search(sent),
        wire_verdict(rt, sent, rw.registered),
        dict(rw.shapes),
        tuple(rw.shape_keys),
        tuple(rw.denied.items()),
    )


def adopt(rw: Rewriter, done: ToolsOutcome) -> None:
    """Take on what ``tools[]`` decided (the first step of a request, on a fresh rewriter)."""
    rw.registered = list(done.registered)
    rw.typed = set(done.typed)
    rw.dropped = list(done.dropped)
    rw.denied = dict(done.denied)
    rw.renames = dict(done.renames)
    rw.search = done.search
    rw.shapes = dict(done.shapes)
    rw.shape_keys = list(done.shape_keys)
