"""Rewrite one Anthropic Messages request body for the wire.

Copy-on-write: only the containers on the path to a change are copied, so a
10 MB history costs one walk and a handful of dict lookups per block, never a
deep copy. The input is never mutated; unchanged sub-objects are shared with
it, so callers treat both as read-only below the top level.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bridge_rules import mcpnames
from bridge_rules.callids import IdRule, id_rule, wire_id
from bridge_rules.calls import wire_conversion, wire_description
from bridge_rules.runtime import Runtime
from bridge_rules.schemas import Shape
from bridge_rules.textplan import API, Plan
from bridge_rules.transform.boundary import closed_gate, connector, forced_denied, tool_denied
from bridge_rules.transform.guard import NOTHING, Verdict, apply_verdict, wire_verdict
from bridge_rules.transform.references import (
    holds_references,
    rename_references,
    uses_tool_search,
)
from bridge_rules.transform.results import seals
from bridge_rules.transform.target_rules import fit_request

_UNTYPED = ("", "custom")


@dataclass(kw_only=True)
class Outcome:
    """What the way back needs to know about a rewritten request.

    ``registered`` are the local names of the tools that were sent (after
    filters); the proxy hands them to ``inbound`` for the response, which keeps
    the reverse map scoped to this request's own tools.
    """

    renames: dict[str, str] = field(default_factory=dict)
    gate_open: bool = False
    registered: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    gate_reason: str = ""
    rejected: str | None = None
    """Why the request must not be sent (``wire_names``: an invalid or shared wire name); the
    proxy answers it with a 400 ``invalid_request_error``."""
    shapes: Mapping[str, Shape] = field(default_factory=dict)
    """How calls to the tools sent cross their schema conversion (``schemas:``), by local
    name: hand them to ``inbound`` with ``registered`` so the answer comes back in the
    agent's shape."""
    policed: bool = False
    """The gate is shut and the policy took something out: the body is the payload as
    serialised, not the client's bytes (:mod:`bridge_rules.transform.boundary`)."""


@dataclass
class OutboundResult(Outcome):
    """A rewritten request (``payload``, sharing unchanged parts with the input) and its outcome."""

    payload: Any


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


class Rewriter:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.plan = rt.plan
        self.renames: dict[str, str] = {}
        self.typed: set[str] = set()
        self.dropped: list[str] = []
        self.denied: dict[str, str] = {}
        """Tools the policy took out, with the rule that did (``policy:``)."""
        self.registered: list[str] = []
        self.search = False
        """Whether ``tool_reference`` names are renamed (the tools allow tool search)."""
        self.history = rt.history
        self.seals = seals(rt)
        self.shapes: dict[str, Shape] = {}
        """How calls cross the schema conversion of each tool this request sent, where it
        changes them (``bridge_rules.schemas``): this request's own, never a worker's."""
        self.shape_keys: list[tuple[str, bytes | None]] = []
        self.ids: IdRule = id_rule(rt.rules.schemas.target)  # the target's id rule

    def wire(self, name: str) -> str:
        if name in self.typed:
            return name
        wire = self.renames.get(name)
        if wire is None:
            wire = self.rt.outbound_name(name)
            if wire != name:
                self.renames[name] = wire
        return wire

    def tools(self, tools: list[Any]) -> list[Any] | None:
        plan = self.plan
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
        policy = self.rt.policy if self.rt.policy.active else None
        for tool in tools:
            name = tool.get("name") if isinstance(tool, dict) else None
            if filters and isinstance(name, str) and _filtered(name, plan, direct):
                self.dropped.append(name)
                changed = True
                continue
            denial = None if policy is None else tool_denied(self.rt, tool)
            if denial is not None:
                self.dropped.append(denial[0])
                self.denied[denial[0]] = denial[1]
                changed = True
                continue
            if not isinstance(name, str):
                out.append(tool)
                continue
            self.registered.append(name)
            if _is_typed(tool):
                self.typed.add(name)
                out.append(tool)
                continue
            wire = self.wire(name)
            new_tool = tool
            if wire != name:
                new_tool = {**tool, "name": wire}
            if "input_schema" in tool:
                schema = tool["input_schema"]
                key, conversion = wire_conversion(self.rt, name, schema)
                advertised = conversion.schema
                if not conversion.shape.identity:
                    self.shapes[name] = conversion.shape
                    self.shape_keys.append((name, key))
                if advertised is not schema and advertised != schema:
                    new_tool = {**new_tool, "input_schema": advertised}
            if name in self.rt.descriptions:
                said = tool.get("description")
                sent = wire_description(self.rt, name, said)
                if sent != said:
                    new_tool = {**new_tool, "description": sent}
            changed = changed or new_tool is not tool
            out.append(new_tool)
        return out if changed else None

    def tool_use(self, block: dict[str, Any]) -> dict[str, Any]:
        name = block.get("name")
        if not isinstance(name, str) or name in self.typed:
            return block
        if "input" not in block:
            wire = self.wire(name)
            return block if wire == name else {**block, "name": wire}
        args = block["input"]
        wire, convert = self.history.get(name) or self.rt.history_plan(name)
        new_args = convert(args) if convert is not None else args
        shape = self.shapes.get(name)
        if shape is not None:
            new_args = shape.forward(new_args)
        if wire == name:
            if new_args is args:
                return block
        elif name not in self.renames:
            self.renames[name] = wire
        new = block.copy()
        new["name"] = wire
        new["input"] = new_args
        return new

    def tool_result(self, block: dict[str, Any]) -> dict[str, Any]:
        name = block.get("name")
        if isinstance(name, str):
            wire = self.wire(name)
            if wire != name:
                return {**block, "name": wire}
        return block

    def history_key(self) -> tuple[frozenset[str], bool, frozenset[tuple[str, bytes | None]]]:
        """Everything :meth:`messages` reads besides the rules and the messages themselves.

        Two rewriters with equal keys over one runtime rewrite any message to equal
        output, so the outbound cache stores a message's output under this key
        (``transform.cached``). A new input of :meth:`messages` belongs here too.
        """
        return frozenset(self.typed), self.search, frozenset(self.shape_keys)

    def messages(self, messages: list[Any]) -> list[Any] | None:
        """Every message's own rewrite: sealed ids opened (:mod:`bridge_rules.transform.results`,
        so the rest of the walk sees the call as the model made it), ``tool_use`` and
        ``tool_result`` names, history replay, and ``tool_reference`` names when ``search``.

        The hot loop of a long history: inlined type checks, copies only on change.
        Nothing else in the request touches a message afterwards, so this is also
        what the outbound cache stores per message.
        """
        out: list[Any] | None = None
        tool_use, tool_result, seals = self.tool_use, self.tool_result, self.seals
        search, rename = self.search, self.wire  # a typed tool's reference keeps its name
        for i, message in enumerate(messages):
            if type(message) is not dict:
                continue
            content = message.get("content")
            if type(content) is not list:
                continue
            new_content: list[Any] | None = None
            for j, block in enumerate(content):
                if type(block) is not dict:
                    continue
                kind = block.get("type")
                if kind == "tool_use":
                    new_block = tool_use(block if seals is None else seals.tool_use(block))
                    new_block = self._valid_id(new_block, "id")
                elif kind == "tool_result":
                    new_block = block if seals is None else seals.tool_result(block)
                    if "name" in new_block:
                        new_block = tool_result(new_block)
                    new_block = self._valid_id(new_block, "tool_use_id")
                    if search:
                        new_block = rename_references(new_block, rename)
                elif search and holds_references(kind):
                    new_block = rename_references(block, rename)
                else:
                    continue
                if new_block is not block:
                    if new_content is None:
                        new_content = content.copy()
                    new_content[j] = new_block
            if new_content is not None:
                if out is None:
                    out = messages.copy()
                new_message = message.copy()
                new_message["content"] = new_content
                out[i] = new_message
        return out

    def _valid_id(self, block: dict[str, Any], key: str) -> dict[str, Any]:
        """The block with its id as the target accepts it (:mod:`bridge_rules.callids`): the
        same function of the id alone for a call and its result, so they stay paired."""
        value = block.get(key)
        if type(value) is not str or self.ids.valid(value):
            return block
        return {**block, key: wire_id(value, self.ids)}

    def seal_refusals(self) -> int:
        """Seals found so far on calls they were not made for (``transform.results``)."""
        return 0 if self.seals is None else self.seals.refusals()

    def run_alone(
        self, messages: list[Any]
    ) -> tuple[list[Any] | None, tuple[tuple[str, str], ...]]:
        """Messages rewritten (None: unchanged) and the renames they bring on their own.

        The renames also join this request's, in order; the cache stores the run's own.
        """
        shared, self.renames = self.renames, {}
        try:
            out = self.messages(messages)
            own = tuple(self.renames.items())
        finally:
            self.renames = shared
        for name, wire in own:
            shared.setdefault(name, wire)
        return out, own

    def adopt(self, done: ToolsOutcome) -> None:
        """Take on what ``tools[]`` decided (the first step of a request, on a fresh rewriter)."""
        self.registered = list(done.registered)
        self.typed = set(done.typed)
        self.dropped = list(done.dropped)
        self.denied = dict(done.denied)
        self.renames = dict(done.renames)
        self.search = done.search
        self.shapes = dict(done.shapes)
        self.shape_keys = list(done.shape_keys)

    def add_renames(self, renames: tuple[tuple[str, str], ...]) -> None:
        """Renames a cached message brought, in the order the uncached walk would add them."""
        for name, wire in renames:
            self.renames.setdefault(name, wire)

    def tool_choice(self, choice: Any) -> tuple[bool, Any]:
        """(keep, value): a forced choice of a dropped tool cannot be honoured."""
        if not isinstance(choice, dict) or choice.get("type") != "tool":
            return True, choice
        name = choice.get("name")
        if not isinstance(name, str):
            return True, choice
        if name in self.dropped:
            return False, None
        wire = self.wire(name)
        return True, choice if wire == name else {**choice, "name": wire}

    def system(self, system: Any) -> Any:
        ops = self.plan.system_ops
        if isinstance(system, str):
            return _apply(ops, system)
        if not isinstance(system, list):
            return system
        out: list[Any] | None = None
        for i, block in enumerate(system):
            if not isinstance(block, dict) or block.get("type") != "text":
                continue
            text = block.get("text")
            if not isinstance(text, str):
                continue
            new_text = _apply(ops, text)
            if new_text != text:
                if out is None:
                    out = list(system)
                out[i] = {**block, "text": new_text}
        return system if out is None else out


def _apply(ops: tuple[Any, ...], text: str) -> str:
    for op in ops:
        text = op.apply(text)
    return text


def _tool_names(tools: Any) -> list[str]:
    if not isinstance(tools, list):
        return []
    return [t["name"] for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)]


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
    new_tools = rw.tools(tools)
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


MessagesStep = Callable[["Rewriter", list[Any]], "list[Any] | None"]
"""How the ``messages`` array is rewritten: the plain walk, or the cache's (transform.cached)."""
ToolsStep = Callable[[Runtime, list[Any]], ToolsOutcome]
"""How ``tools[]`` are decided: :func:`tools_outcome`, or remembered (transform.cached)."""


def rewrite_outbound(
    rt: Runtime,
    payload: Any,
    model: str | None = None,
    env: Mapping[str, str] | None = None,
) -> OutboundResult:
    """Gate, filter and rewrite a request body; never raises on its shape."""
    return rewrite_with(rt, payload, model, env, Rewriter.messages)


def rewrite_with(
    rt: Runtime,
    payload: Any,
    model: str | None,
    env: Mapping[str, str] | None,
    messages_step: MessagesStep,
    *,
    tools_step: ToolsStep = tools_outcome,
) -> OutboundResult:
    """:func:`rewrite_outbound` with the ``messages`` and ``tools`` steps supplied (same
    order of effects)."""
    if not isinstance(payload, dict):
        return OutboundResult(payload, gate_reason="the payload is not a JSON object")
    model_id = model if model is not None else payload.get("model")
    decision = rt.gate_decision({"api": API, "id": model_id}, env)
    if not decision.open:
        closed = OutboundResult(
            dict(payload),
            gate_open=False,
            registered=_tool_names(payload.get("tools")),
            gate_reason=decision.reason,
        )
        if rt.policy.active:  # the policy holds whatever the gate says
            closed_gate(rt, payload, closed)
        return closed
    plan = rt.plan
    rw = Rewriter(rt)
    out = dict(payload)
    tools = payload.get("tools")
    verdict = NOTHING
    if isinstance(tools, list):
        done = tools_step(rt, tools)
        rw.adopt(done)
        if done.tools is not None:
            out["tools"] = done.tools
        verdict = done.verdict
    refused = None
    if "tool_choice" in payload:
        refused = forced_denied(rt, payload["tool_choice"], tools)
    if rt.policy.active and "mcp_servers" in payload:
        servers = connector(rt, payload["mcp_servers"], rw.dropped)
        if servers is not None:
            out["mcp_servers"] = servers
    if "tool_choice" in payload:
        keep, choice = rw.tool_choice(payload["tool_choice"])
        if not keep:
            del out["tool_choice"]
        elif choice is not payload["tool_choice"]:
            out["tool_choice"] = choice
    fit_request(rt.schema_book.profile.target, out)
    messages = payload.get("messages")
    if isinstance(messages, list):
        new_messages = messages_step(rw, messages)
        if new_messages is not None:
            out["messages"] = new_messages
    if plan.system_ops and "system" in payload:
        system = rw.system(payload["system"])
        if system is not payload["system"]:
            out["system"] = system
    result = OutboundResult(
        out,
        renames=rw.renames,
        gate_open=True,
        registered=rw.registered,
        dropped=rw.dropped,
        gate_reason=decision.reason,
        shapes=rw.shapes,
    )
    result = apply_verdict(result, verdict)
    if refused is not None and result.rejected is None:
        result.rejected = refused
    return result
