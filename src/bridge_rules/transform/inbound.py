"""Rewrite a non-streaming response message back into the local agent's terms."""

from __future__ import annotations

from typing import Any

from bridge_rules.transform.recover import recover_tool_calls
from bridge_rules.transform.references import references_in
from bridge_rules.transform.scope import CallScope
from bridge_rules.transform.unmapped import UnmappedPolicy


def rewrite_block(scope: CallScope, block: Any) -> Any:
    """A ``tool_use`` block with its name mapped back and its input adapted; others as they are."""
    if not isinstance(block, dict) or block.get("type") != "tool_use":
        return references_in(scope.rt, block, scope.registered)
    name = block.get("name")
    if not isinstance(name, str):
        return block
    if "input" not in block:
        local = scope.local_name(name)
        return block if local is None or local == name else {**block, "name": local}
    args = block["input"]
    call = scope.call(name, args)
    ident = block.get("id")
    sealed = scope.seal(ident, call)
    if call.name == name and call.arguments is args and sealed == ident:
        return block
    new = {**block, "name": call.name, "input": call.arguments}
    if sealed != ident:
        new["id"] = sealed
    return new


def _note_rename(scope: CallScope, block: dict[str, Any], new_block: Any) -> None:
    """A ``tool_use`` block whose name was mapped back."""
    if block.get("type") != "tool_use" or not isinstance(new_block, dict):
        return
    name, local = block.get("name"), new_block.get("name")
    if isinstance(name, str) and isinstance(local, str) and local != name:
        scope.renamed(name, local)


def rewrite_message(scope: CallScope, message: Any) -> Any:
    """A new message with tool calls in local shape; unknown tools and shapes untouched.

    Each call is mapped back, adapted and sealed as ``scope`` says; its report receives
    the names mapped back, and the calls ``inbound.unmapped`` (``warn``, ``error``) or the
    policy found.
    """
    if not isinstance(message, dict):
        return message
    rt = scope.rt
    out = dict(message)
    content = message.get("content")
    if not isinstance(content, list):
        return out
    if not scope.mapping:  # the gate is shut: names stay, only the policy judges the calls
        if rt.policy.active:
            UnmappedPolicy(scope).message(out)
        return out
    new_content: list[Any] | None = None
    for i, block in enumerate(content):
        new_block = rewrite_block(scope, block)
        if new_block is not block:
            if new_content is None:
                new_content = list(content)
            new_content[i] = new_block
            _note_rename(scope, block, new_block)
    if new_content is not None:
        out["content"] = new_content
    if rt.plan.recover_tool_calls:
        recover_tool_calls(scope, out)
    if rt.rules.unmapped != "pass" or rt.policy.active:
        UnmappedPolicy(scope).message(out)
    return out
