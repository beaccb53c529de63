"""What one wire request becomes for the Claude Code CLI: a plan, built without I/O.

The proxy has already rewritten the request with the rules, so its tool names are
wire names (``Read``, ``mcp__pi__ls``). Here they are split: the names the tested CLI
has as built-ins go to ``--tools``; every other tool is declared on an in-process MCP
server, with its own schema, under a name the CLI shows the model as
``mcp__<server>__<tool>``. A wire name that already has that shape keeps it; any other
is put on the server :data:`BRIDGE_SERVER`, and the model's calls are named back.

The conversation is replayed as stream-json input lines, one per message: every
user message but the last is sent with ``shouldQuery: false`` (appended, no model
call), assistant messages are appended as they are, and the last user message starts
the one model call. The history keeps its tool_use and tool_result blocks; nothing is
flattened into text and no session file is read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bridge_rules import jsonio, mcpnames

BRIDGE_SERVER = "bridge"
"""The in-process MCP server of the tools whose wire names are not ``mcp__server__tool``."""

BUILTINS = frozenset(
    {
        "Bash", "CronCreate", "CronDelete", "CronList", "Edit", "EnterWorktree",
        "ExitWorktree", "Glob", "Grep", "ListAgents", "Monitor", "NotebookEdit", "Read",
        "ReportFindings", "ScheduleWakeup", "SendMessage", "Skill", "Task", "TaskCreate",
        "TaskGet", "TaskList", "TaskStop", "TaskUpdate", "ToolSearch", "WebFetch",
        "WebSearch", "Workflow", "Write",
    }
)  # fmt: skip
"""The built-ins the tested CLI (2.1.332) lists in its ``system/init`` inventory when
``--tools`` names them; any other name is offered as an MCP tool."""

_NAME_CHARS = re.compile(r"[A-Za-z0-9_-]+")
_EXTRA_BODY = ("temperature", "top_p", "top_k", "stop_sequences", "thinking", "metadata")
"""Request fields the CLI has no flag for; they reach the model through
``CLAUDE_CODE_EXTRA_BODY``, which the CLI merges into each request body (``tool_choice``
too, its tool named as the CLI names it)."""


class PlanError(ValueError):
    """The request cannot be replayed through the CLI (told to the client as a 400)."""


@dataclass(frozen=True)
class McpTool:
    server: str
    name: str
    description: str
    schema: dict[str, Any]


@dataclass
class CliPlan:
    model: str | None
    system: str
    builtins: list[str]
    mcp_tools: list[McpTool]
    lines: list[dict[str, Any]]
    """stream-json input messages, in order; the last one starts the model call."""
    to_wire: dict[str, str]
    """Tool names as the CLI shows them -> wire names, where they differ."""
    env: dict[str, str] = field(default_factory=dict)
    stream: bool = False

    @property
    def servers(self) -> dict[str, list[McpTool]]:
        out: dict[str, list[McpTool]] = {}
        for tool in self.mcp_tools:
            out.setdefault(tool.server, []).append(tool)
        return out

    def wire_name(self, cli_name: str) -> str:
        return self.to_wire.get(cli_name, cli_name)


def cli_name(wire: str) -> tuple[str, str | None, str]:
    """How the CLI will name ``wire``: (its name, its MCP server or None, the tool's
    name on that server)."""
    if wire in BUILTINS:
        return wire, None, wire
    found = mcpnames.first_split(wire) if _NAME_CHARS.fullmatch(wire) else None
    if found is not None:
        return wire, found[0], found[1]
    return f"mcp__{BRIDGE_SERVER}__{wire}", BRIDGE_SERVER, wire


def system_text(system: Any) -> str:
    if system is None:
        return ""
    if isinstance(system, str):
        return system
    if isinstance(system, list):
        return "\n\n".join(
            b["text"] for b in system if isinstance(b, dict) and isinstance(b.get("text"), str)
        )
    raise PlanError("'system' must be a string or a list of text blocks")


def _renamed(content: Any, to_cli: Mapping[str, str]) -> Any:
    """``content`` with each tool_use block named as the CLI names the tool."""
    if not isinstance(content, list) or not to_cli:
        return content
    out = []
    for block in content:
        name = block.get("name") if isinstance(block, dict) else None
        if isinstance(name, str) and name in to_cli and block.get("type") == "tool_use":
            out.append({**block, "name": to_cli[name]})
        else:
            out.append(block)
    return out


def _lines(messages: Any, to_cli: Mapping[str, str]) -> list[dict[str, Any]]:
    if not isinstance(messages, list) or not messages:
        raise PlanError("'messages' must be a non-empty list")
    last = messages[-1]
    if not isinstance(last, dict) or last.get("role") != "user":
        raise PlanError(
            "the Claude Code upstream answers a conversation that ends with a user message"
        )
    lines: list[dict[str, Any]] = []
    for i, msg in enumerate(messages):
        role = msg.get("role") if isinstance(msg, dict) else None
        if role not in ("user", "assistant"):
            raise PlanError(f"messages[{i}]: role must be 'user' or 'assistant'")
        content = _renamed(msg.get("content"), to_cli) if role == "assistant" else msg["content"]
        line: dict[str, Any] = {
            "type": role,
            "message": {"role": role, "content": content},
            "parent_tool_use_id": None,
            "session_id": "default",
        }
        if role == "user" and i < len(messages) - 1:
            line["shouldQuery"] = False
        lines.append(line)
    return lines


def _tool_choice(choice: Any, to_cli: Mapping[str, str]) -> Any:
    """The request's ``tool_choice`` as the CLI's model call needs it: a named tool under
    the name the CLI gives it (``mcp__bridge__search_docs``); anything else as it is."""
    if not isinstance(choice, dict) or choice.get("type") != "tool":
        return choice
    name = choice.get("name")
    return {**choice, "name": to_cli[name]} if isinstance(name, str) and name in to_cli else choice


def _env(body: Mapping[str, Any], to_cli: Mapping[str, str]) -> dict[str, str]:
    env: dict[str, str] = {}
    extra = {k: body[k] for k in _EXTRA_BODY if body.get(k) is not None}
    if body.get("tool_choice") is not None:
        extra["tool_choice"] = _tool_choice(body["tool_choice"], to_cli)
    if extra:
        env["CLAUDE_CODE_EXTRA_BODY"] = jsonio.dumps(extra).decode()
    max_tokens = body.get("max_tokens")
    if isinstance(max_tokens, int) and not isinstance(max_tokens, bool) and max_tokens > 0:
        env["CLAUDE_CODE_MAX_OUTPUT_TOKENS"] = str(max_tokens)
    return env


def plan(body: Mapping[str, Any]) -> CliPlan:
    """The plan for a wire request body (a parsed Messages request)."""
    builtins: list[str] = []
    mcp_tools: list[McpTool] = []
    to_wire: dict[str, str] = {}
    to_cli: dict[str, str] = {}
    for tool in body.get("tools") or ():
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise PlanError("each of 'tools' must be an object with a name")
        if tool.get("type") not in (None, "custom"):
            continue  # a typed server tool (web_search_20250305, ...) has no CLI form
        wire = tool["name"]
        name, server, local = cli_name(wire)
        if server is None:
            builtins.append(wire)
            continue
        schema = tool.get("input_schema")
        description = tool.get("description")
        mcp_tools.append(
            McpTool(
                server,
                local,
                description if isinstance(description, str) else "",
                schema if isinstance(schema, dict) else {"type": "object"},
            )
        )
        if name != wire:
            to_wire[name] = wire
            to_cli[wire] = name
    model = body.get("model")
    return CliPlan(
        model=model if isinstance(model, str) else None,
        system=system_text(body.get("system")),
        builtins=builtins,
        mcp_tools=mcp_tools,
        lines=_lines(body.get("messages"), to_cli),
        to_wire=to_wire,
        env=_env(body, to_cli),
        stream=body.get("stream") is True,
    )
