"""The policy's part of a request, whatever the gate says (docs/policy.md).

The rules' name gate decides whether names are rewritten; it does not decide whether the
policy holds. With the gate shut (a model id the gate does not match) the body goes as
the client wrote it except for what the policy takes out: denied tools, the MCP
connector's denied servers (``mcp_servers[]``, ``mcp_toolset`` tools), and a
``tool_choice`` that forces a denied tool (refused, as with the gate open). The answer's
calls are judged the same way (:class:`~bridge_rules.transform.scope.CallScope` with
``mapping`` off).
"""

from __future__ import annotations

from typing import Any, Protocol

from bridge_rules.policy import connector_name
from bridge_rules.runtime import Runtime


class Closed(Protocol):
    """What :func:`closed_gate` fills in (an ``OutboundResult``)."""

    payload: Any
    dropped: list[str]
    registered: list[str]
    policed: bool
    rejected: str | None


TOOLSET = "mcp_toolset"


def toolset_rule(rt: Runtime, tool: dict[str, Any]) -> str | None:
    """Why an ``mcp_toolset`` tool may not be sent (its server is denied), or None."""
    server = tool.get("mcp_server_name")
    if not isinstance(server, str):
        return "an mcp_toolset without a server name cannot be judged by the policy"
    decision = rt.policy.server(server)
    return None if decision.allowed else str(decision.rule)


def tool_denied(rt: Runtime, tool: Any) -> tuple[str, str] | None:
    """(the name it is reported under, the rule) when the policy denies a ``tools[]`` entry:
    a tool by its local and wire names (a typed tool's is its reserved name), an
    ``mcp_toolset`` by its server; None when it may be sent."""
    if not isinstance(tool, dict):
        return None
    kind = tool.get("type")
    if kind == TOOLSET:
        rule = toolset_rule(rt, tool)
        return None if rule is None else (connector_name(str(tool.get("mcp_server_name"))), rule)
    name = tool.get("name")
    if not isinstance(name, str):
        return None
    typed = isinstance(kind, str) and kind not in ("", "custom")
    decision = rt.policy.decide(name, name if typed else rt.outbound_name(name))
    return None if decision.allowed else (name, str(decision.rule))


def connector(rt: Runtime, servers: Any, dropped: list[str]) -> list[Any] | None:
    """``mcp_servers[]`` without the servers the policy denies (None: all kept); each
    removed server is added to ``dropped`` as ``mcp__<server>__*``."""
    if not isinstance(servers, list):
        return None
    kept: list[Any] = []
    for server in servers:
        name = server.get("name") if isinstance(server, dict) else None
        if isinstance(name, str) and rt.policy.server(name).allowed:
            kept.append(server)
            continue
        dropped.append(connector_name(name) if isinstance(name, str) else "mcp_servers[?]")
    return kept if len(kept) != len(servers) else None


def forced_denied(rt: Runtime, choice: Any, tools: Any) -> str | None:
    """Why a ``tool_choice`` that forces a tool the policy denies cannot be sent: the model
    would have to call it (a 400 naming the tool and the rule). The forced name is judged
    as a call under it and under the wire name it goes out as, against the request's
    ``tools``."""
    if not rt.policy.active or not isinstance(choice, dict) or choice.get("type") != "tool":
        return None
    name = choice.get("name")
    if not isinstance(name, str):
        return None
    sent = [t.get("name") for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []
    judge = rt.judge.for_request(tuple(n for n in sent if isinstance(n, str)))
    decision = judge.decide_all((rt.outbound_name(name),), name)
    if decision.allowed:
        return None
    return f"tool_choice forces tool '{name}', which the policy denies: {decision.rule}"


def closed_gate(rt: Runtime, payload: dict[str, Any], result: Closed) -> None:
    """The policy on a request the gate leaves as written: ``result.payload`` (a copy of
    the top level) loses what the policy denies; ``result.policed`` says whether it did."""
    out = result.payload
    tools = payload.get("tools")
    if isinstance(tools, list):
        kept: list[Any] = []
        for tool in tools:
            denial = tool_denied(rt, tool)
            if denial is None:
                kept.append(tool)
            else:
                result.dropped.append(denial[0])
        if len(kept) != len(tools):
            out["tools"] = kept
            result.registered = [n for n in result.registered if n not in result.dropped]
            result.policed = True
    servers = connector(rt, payload.get("mcp_servers"), result.dropped)
    if servers is not None:
        out["mcp_servers"] = servers
        result.policed = True
    result.rejected = forced_denied(rt, payload.get("tool_choice"), tools)
