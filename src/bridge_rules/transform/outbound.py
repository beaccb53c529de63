"""Rewrite one Anthropic Messages request body for the wire.

The request's steps in order (gate, ``tools[]``, ``tool_choice``, the target's fit,
``messages``, ``system``); what ``tools[]`` decide is :mod:`~bridge_rules.transform.outbound_tools`,
the per-request rewriter :mod:`~bridge_rules.transform.rewriter`.

Copy-on-write: only the containers on the path to a change are copied, so a
10 MB history costs one walk and a handful of dict lookups per block, never a
deep copy. The input is never mutated; unchanged sub-objects are shared with
it, so callers treat both as read-only below the top level.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bridge_rules.runtime import Runtime
from bridge_rules.schemas import Shape
from bridge_rules.textplan import API
from bridge_rules.transform.boundary import closed_gate, connector, forced_denied
from bridge_rules.transform.guard import NOTHING, apply_verdict
from bridge_rules.transform.outbound_tools import (
    ToolsOutcome,
    adopt,
    remembered_tools,
    tools_outcome,
)
from bridge_rules.transform.rewriter import Rewriter
from bridge_rules.transform.target_rules import fit_request


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


def _tool_names(tools: Any) -> list[str]:
    if not isinstance(tools, list):
        return []
    return [t["name"] for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)]


MessagesStep = Callable[["Rewriter", list[Any]], "list[Any] | None"]
"""How the ``messages`` array is rewritten: the plain walk, or the cache's (transform.cached)."""
ToolsStep = Callable[[Runtime, list[Any]], ToolsOutcome]
"""How ``tools[]`` are decided: :func:`tools_outcome`, or remembered (transform.cached)."""


def rewrite_outbound(
    rt: Runtime,
    payload: Any,
    model: str | None = None,
    env: Mapping[str, str] | None = None,
    *,
    memo: bool = True,
    messages_step: MessagesStep = Rewriter.messages,
) -> OutboundResult:
    """Gate, filter and rewrite a request body; never raises on its shape.

    ``memo``: what a ``tools`` array decides is remembered in the runtime's tools memo
    while its message cache is on (:func:`~bridge_rules.transform.outbound_tools.remembered_tools`);
    the output is the same either way. ``messages_step``: the walk, or one that wraps it."""
    step = remembered_tools if memo and rt.message_cache.enabled else tools_outcome
    return rewrite_with(rt, payload, model, env, messages_step, tools_step=step)


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
        adopt(rw, done)
        sent = done.sent(tools)
        if sent is not None:
            out["tools"] = sent
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


__all__ = [
    "MessagesStep",
    "OutboundResult",
    "Outcome",
    "Rewriter",
    "ToolsOutcome",
    "ToolsStep",
    "rewrite_outbound",
    "rewrite_with",
    "tools_outcome",
]
