"""``tool_reference`` blocks (tool search) renamed like every other tool name.

Tool search answers with ``{"type": "tool_reference", "tool_name": ...}`` blocks:
inside a ``tool_result`` the agent sends back (client-side search), and inside a
``tool_search_tool_result`` the API returns (server-side search). Their names
are tool names like any other, so they go out under the wire name and come back
under the local one. The walk is bounded and only enters blocks that can hold
references; a request without deferred tools or a tool search tool skips it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bridge_rules.runtime import Runtime

Rename = Callable[[str], str]
_MAX_DEPTH = 6


def _holds_references(kind: Any) -> bool:
    return kind == "tool_result" or (isinstance(kind, str) and "tool_search" in kind)


def rename_references(value: Any, rename: Rename, depth: int = 0) -> Any:
    """``value`` with every ``tool_reference.tool_name`` renamed (copy-on-write)."""
    if depth > _MAX_DEPTH:
        return value
    if isinstance(value, list):
        out: list[Any] | None = None
        for i, item in enumerate(value):
            new = rename_references(item, rename, depth + 1)
            if new is not item:
                if out is None:
                    out = list(value)
                out[i] = new
        return value if out is None else out
    if not isinstance(value, dict):
        return value
    if value.get("type") == "tool_reference":
        name = value.get("tool_name")
        if isinstance(name, str):
            new_name = rename(name)
            if new_name != name:
                return {**value, "tool_name": new_name}
        return value
    changed: dict[str, Any] = {}
    for key in ("content", "tool_references"):
        if key in value:
            new = rename_references(value[key], rename, depth + 1)
            if new is not value[key]:
                changed[key] = new
    return {**value, **changed} if changed else value


def uses_tool_search(tools: Any) -> bool:
    """Whether a request with these ``tools`` can carry ``tool_reference`` blocks at all."""
    if not isinstance(tools, list):
        return False
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        kind = tool.get("type")
        if tool.get("defer_loading") is True or (isinstance(kind, str) and "tool_search" in kind):
            return True
    return False


def references_out(rt: Runtime, payload: dict[str, Any], search: bool) -> dict[str, Any]:
    """History's tool references under their wire names; ``search``: whether the request's
    tools allow references at all (:func:`uses_tool_search`)."""
    messages = payload.get("messages")
    if not search or not isinstance(messages, list):
        return payload
    out: list[Any] | None = None
    for i, message in enumerate(messages):
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        new_content: list[Any] | None = None
        for j, block in enumerate(content):
            if not isinstance(block, dict) or not _holds_references(block.get("type")):
                continue
            new = rename_references(block, rt.outbound_name)
            if new is not block:
                if new_content is None:
                    new_content = list(content)
                new_content[j] = new
        if new_content is not None:
            if out is None:
                out = list(messages)
            out[i] = {**message, "content": new_content}
    return payload if out is None else {**payload, "messages": out}


def references_in(rt: Runtime, block: Any, registered: tuple[str, ...] | None) -> Any:
    """A response block with its tool references under local names (unmapped ones kept)."""
    if not isinstance(block, dict) or not _holds_references(block.get("type")):
        return block

    def back(name: str) -> str:
        local = rt.inbound_name(name, registered)
        return name if local is None else local

    return rename_references(block, back)
