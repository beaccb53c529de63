"""Rewrite a non-streaming response message back into the local agent's terms."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from bridge_rules.calls import inbound_call
from bridge_rules.runtime import Runtime
from bridge_rules.schemas.book import Shapes
from bridge_rules.transform.recover import recover_tool_calls
from bridge_rules.transform.references import references_in
from bridge_rules.transform.results import CallSealer
from bridge_rules.transform.unmapped import InboundReport, UnmappedPolicy


def freeze(registered: Iterable[str] | None) -> tuple[str, ...] | None:
    """Materialise ``registered`` once: it may be a one-shot iterator, and is used per call."""
    return None if registered is None else tuple(registered)


def rewrite_block(
    rt: Runtime,
    block: Any,
    registered: tuple[str, ...] | None,
    sealer: CallSealer | None = None,
    shapes: Shapes | None = None,
) -> Any:
    """A ``tool_use`` block with its name mapped back and its input adapted; others as they are."""
    if not isinstance(block, dict) or block.get("type") != "tool_use":
        return references_in(rt, block, registered)
    name = block.get("name")
    if not isinstance(name, str):
        return block
    if "input" not in block:
        local = rt.inbound_name(name, registered)
        return block if local is None or local == name else {**block, "name": local}
    args = block["input"]
    call = inbound_call(rt, name, args, registered, shapes)
    ident = block.get("id")
    sealed = sealer.seal(ident, call) if sealer is not None and isinstance(ident, str) else ident
    if call.name == name and call.arguments is args and sealed == ident:
        return block
    new = {**block, "name": call.name, "input": call.arguments}
    if sealed != ident:
        new["id"] = sealed
    return new


def _note_rename(report: InboundReport, block: dict[str, Any], new_block: Any) -> None:
    """A ``tool_use`` block whose name was mapped back."""
    if block.get("type") != "tool_use" or not isinstance(new_block, dict):
        return
    name, local = block.get("name"), new_block.get("name")
    if isinstance(name, str) and isinstance(local, str) and local != name:
        report.rename(name, local)


def rewrite_message(
    rt: Runtime,
    message: Any,
    registered: Iterable[str] | None = None,
    sealer: CallSealer | None = None,
    report: InboundReport | None = None,
    *,
    shapes: Shapes | None = None,
) -> Any:
    """A new message with tool calls in local shape; unknown tools and shapes untouched.

    ``sealer``: gives each call, once adapted, the id it goes back with (see
    :class:`~bridge_rules.transform.results.CallSealer`);
    ``report``: receives the names mapped back, and the calls ``inbound.unmapped`` found
    (``warn`` and ``error``); ``shapes``: the request's schema conversions
    (``OutboundResult.shapes``), so calls come back in the agent's shape.
    """
    if not isinstance(message, dict):
        return message
    reg = freeze(registered)
    out = dict(message)
    content = message.get("content")
    if not isinstance(content, list):
        return out
    new_content: list[Any] | None = None
    for i, block in enumerate(content):
        new_block = rewrite_block(rt, block, reg, sealer, shapes)
        if new_block is not block:
            if new_content is None:
                new_content = list(content)
            new_content[i] = new_block
            if report is not None:
                _note_rename(report, block, new_block)
    if new_content is not None:
        out["content"] = new_content
    if rt.plan.recover_tool_calls:
        recover_tool_calls(rt, out, reg, sealer, shapes)
    if rt.rules.unmapped != "pass":
        UnmappedPolicy(rt, reg, report).message(out)
    return out
