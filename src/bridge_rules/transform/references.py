"""``tool_reference`` blocks (tool search) renamed like every other tool name.

Tool search answers with ``{"type": "tool_reference", "tool_name": ...}`` blocks:
inside a ``tool_result`` the agent sends back (client-side search), and inside a
``tool_search_tool_result`` the API returns (server-side search). Their names
are tool names like any other, so they go out under the wire name and come back
under the local one. The walk is bounded and only enters blocks that can hold
references; a request without deferred tools or a tool search tool skips it.

On the way out the history walk (``transform.rewriter.Rewriter.messages``) renames them
block by block, in the same pass as ``tool_use`` names: a message's references are part
of its own rewrite, which the outbound cache stores, and not a later pass over the whole
request that a cached message would escape.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bridge_rules.runtime import Runtime

Rename = Callable[[str], str]
_MAX_DEPTH = 6


def holds_references(kind: Any) -> bool:
    """Whether a block of this ``type`` can hold references (a ``tool_result``, or a
    ``tool_search_*`` result)."""
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


def references_in(rt: Runtime, block: Any, registered: tuple[str, ...] | None) -> Any:
    """A response block with its tool references under local names (unmapped ones kept)."""
    if not isinstance(block, dict) or not holds_references(block.get("type")):
        return block

    def back(name: str) -> str:
        local = rt.inbound_name(name, registered)
        return name if local is None else local

    return rename_references(block, back)
