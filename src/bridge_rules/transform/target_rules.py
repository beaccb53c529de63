"""What a target refuses in a request besides its tools' schemas (docs/schemas.md).

Amazon Bedrock's Converse refuses a tool whose supplied description is empty, and has no
``tool_choice`` of ``none`` (only ``auto``, ``any`` and ``tool``). An empty description
says nothing, so it is left out; "call no tool" is said the way Converse can hear it, by
sending no tools, as the providers' own converters do. Other targets take both as they are.
"""

from __future__ import annotations

from typing import Any

BEDROCK = "bedrock"


def fit_request(target: str | None, out: dict[str, Any]) -> None:
    """``out`` (a request on its way to the wire) made acceptable by ``target``, in place."""
    if target != BEDROCK:
        return
    choice = out.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "none":
        del out["tool_choice"]
        out.pop("tools", None)
        return
    tools = out.get("tools")
    if isinstance(tools, list) and any(_empty_description(t) for t in tools):
        out["tools"] = [_described(t) for t in tools]


def _empty_description(tool: Any) -> bool:
    if not isinstance(tool, dict):
        return False
    said = tool.get("description")
    return isinstance(said, str) and not said.strip()


def _described(tool: Any) -> Any:
    if not _empty_description(tool):
        return tool
    return {k: v for k, v in tool.items() if k != "description"}
