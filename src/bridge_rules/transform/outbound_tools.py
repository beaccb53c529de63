"""What a request's ``tools[]`` decide: filters, the policy, wire names, schemas, descriptions.

A function of the tools and the rules alone (:func:`tools_outcome`), so one outcome serves
every request that sends the same tools (``transform.cached``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bridge_rules import jsonio, mcpnames
from bridge_rules.calls import wire_conversion, wire_description
from bridge_rules.msgcache import ToolsEntry
from bridge_rules.runtime import Runtime
from bridge_rules.schemas import Shape
from bridge_rules.textplan import Plan
from bridge_rules.transform.boundary import tool_denied
from bridge_rules.transform.guard import Verdict, wire_verdict
from bridge_rules.transform.references import uses_tool_search
from bridge_rules.transform.rewriter import Rewriter

_UNTYPED = ("", "custom")
_VALUES = "values"
"""The tools memo's context for arrays handed over as values (bodies use the codec's name)."""


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


Edits = tuple[tuple[int, "Mapping[str, Any] | None"], ...]
"""How an array becomes the array sent: per tool sent, its position in the array and the
top-level keys that change (None: sent as it is)."""


def decide_tools(rw: Rewriter, tools: list[Any]) -> Edits | None:
    """How the tools array is rewritten (None: unchanged), noting on ``rw`` what it decided."""
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
    out: list[tuple[int, Mapping[str, Any] | None]] = []
    changed = False
    filters = plan.filters_tools
    policy = rw.rt.policy if rw.rt.policy.active else None
    for i, tool in enumerate(tools):
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
            out.append((i, None))
            continue
        rw.registered.append(name)
        if _is_typed(tool):
            rw.typed.add(name)
            out.append((i, None))
            continue
        wire = rw.wire(name)
        changes: dict[str, Any] = {}
        if wire != name:
            changes["name"] = wire
        if "input_schema" in tool:
            schema = tool["input_schema"]
            key, conversion = wire_conversion(rw.rt, name, schema)
            advertised = conversion.schema
            if not conversion.shape.identity:
                rw.shapes[name] = conversion.shape
                rw.shape_keys.append((name, key))
            if advertised is not schema and advertised != schema:
                changes["input_schema"] = advertised
        if name in rw.rt.descriptions:
            said = tool.get("description")
            sent = wire_description(rw.rt, name, said)
            if sent != said:
                changes["description"] = sent
        changed = changed or bool(changes)
        out.append((i, changes or None))
    return tuple(out) if changed else None


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
    edits: Edits = ()
    """How ``tools`` was made from the array decided on (:func:`decide_tools`)."""
    origin: Any = None
    """That array."""

    def sent(self, tools: list[Any]) -> list[Any] | None:
        """The tools rewritten from ``tools``, an array equal to the one decided on: its own
        unchanged tools, and its changed ones as new dicts, as :func:`tools_outcome` would
        have made them from it (None: sent as they are)."""
        if self.tools is None or tools is self.origin:
            return self.tools
        return _made(tools, self.edits)


def tools_outcome(rt: Runtime, tools: list[Any]) -> ToolsOutcome:
    rw = Rewriter(rt)
    edits = decide_tools(rw, tools)
    new_tools = None if edits is None else _made(tools, edits)
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
        edits or (),
        tools,
    )


def _made(tools: list[Any], edits: Edits) -> list[Any]:
    return [tools[i] if changes is None else {**tools[i], **changes} for i, changes in edits]


def remembered_tools(rt: Runtime, tools: list[Any]) -> ToolsOutcome:
    """:func:`tools_outcome`, remembered in the runtime's tools memo for a ``tools`` array
    handed over as a value (``Engine.outbound``): an agent sends the same tools every turn.

    Keyed by the array's compact bytes, and used only for an array equal to the one it was
    made from, so values that write alike but differ (NaN and null) never share an
    outcome. The outcome is made from the memo's own parse of those bytes, never from the
    caller's objects, which the caller may change afterwards.
    """
    memo = rt.message_cache.tool_values
    try:
        raw = jsonio.dumps(tools)
        entry = memo.get(raw, _VALUES)
        if entry is not None and entry.value == tools:
            outcome: ToolsOutcome = entry.outcome
            return outcome
        own = jsonio.loads(raw)
        if own != tools:
            return tools_outcome(rt, tools)
    except (TypeError, ValueError, RecursionError):  # not JSON, or too deep to compare
        return tools_outcome(rt, tools)
    done = tools_outcome(rt, own)
    memo.add(ToolsEntry(raw, own, done, _VALUES, -1, -1))
    return done


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
