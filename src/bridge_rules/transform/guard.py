"""The wire names of one rewritten request, checked the way the API will check them.

``lint`` knows the names the rules write; a request brings tools the rules never
saw (a 69-character MCP tool, a name with a ``.``), and two of its tools can end
up under one wire name. Rather than let the API refuse the request with a
message about a name the agent never used, ``wire_names`` decides at run time:

* a name longer than ``max_length`` or with characters outside ``a-zA-Z0-9_-``:
  ``error`` (default) sets :attr:`OutboundResult.rejected` with a message naming
  the local tool, which the proxy answers with a 400; ``shorten`` never gets here
  (the resolver already sent a short name that maps back); ``pass`` sends it;
* two tools under one wire name: ``error`` (default) rejects the same way;
  ``first`` sends the first and drops the others (listed in ``dropped``, and not
  registered, so the way back maps the name to the tool that was sent).
"""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

from bridge_rules.runtime import Runtime
from bridge_rules.wirenames import is_valid, name_problems


class _Result(Protocol):
    """The fields of ``OutboundResult`` this module reads and writes."""

    payload: Any
    registered: list[str]
    dropped: list[str]
    rejected: str | None


R = TypeVar("R", bound=_Result)

_UNTYPED = ("", "custom")


def _sent(payload: Any, registered: list[str]) -> list[tuple[int, str, str, bool]]:
    """(position in tools[], local name, wire name, typed) of every named tool sent."""
    tools = payload.get("tools") if isinstance(payload, dict) else None
    if not isinstance(tools, list):
        return []
    out = []
    locals_ = iter(registered)
    for i, tool in enumerate(tools):
        name = tool.get("name") if isinstance(tool, dict) else None
        if not isinstance(name, str):
            continue
        local = next(locals_, name)
        kind = tool.get("type")
        out.append((i, local, name, isinstance(kind, str) and kind not in _UNTYPED))
    return out


def _invalid(rt: Runtime, sent: list[tuple[int, str, str, bool]]) -> list[str]:
    limit = rt.rules.wire_names.max_length
    problems = []
    for _i, local, wire, typed in sent:
        if typed or is_valid(wire, limit):
            continue
        reasons = name_problems(wire, limit)
        named = f"'{local}'" if local == wire else f"'{local}' (sent as '{wire}')"
        problems.append(f"tool {named} " + " and ".join(reasons))
    return problems


def check_wire_names(rt: Runtime, result: R) -> R:
    """``result`` with ``rejected`` set, or the colliding tools dropped, as ``wire_names`` says."""
    guard = rt.rules.wire_names
    sent = _sent(result.payload, result.registered)
    if not sent:
        return result
    problems = _invalid(rt, sent) if guard.on_invalid == "error" else []
    by_wire: dict[str, list[tuple[int, str]]] = {}
    for i, local, wire, _typed in sent:
        by_wire.setdefault(wire, []).append((i, local))
    clashes = {w: tools for w, tools in by_wire.items() if len(tools) > 1}
    if clashes and guard.on_collision == "first":
        _keep_first(result, clashes)
    elif clashes:
        for wire, tools in clashes.items():
            names = " and ".join(f"'{local}'" for _i, local in tools)
            problems.append(f"tools {names} would both be sent as '{wire}'")
    if problems:
        result.rejected = (
            "bridge-rules refused the request: "
            + "; ".join(problems)
            + ". Rename the tool, add an alias with a valid wire name, or set "
            "`wire_names.on_invalid: shorten` / `on_collision: first` in the rules."
        )
    return result


def _keep_first(result: _Result, clashes: dict[str, list[tuple[int, str]]]) -> None:
    drop = {i for tools in clashes.values() for i, _local in tools[1:]}
    dropped_locals = [local for tools in clashes.values() for _i, local in tools[1:]]
    tools = result.payload["tools"]
    result.payload = {
        **result.payload,
        "tools": [t for i, t in enumerate(tools) if i not in drop],
    }
    result.dropped = [*result.dropped, *dropped_locals]
    remaining = list(result.registered)
    for local in dropped_locals:
        remaining.remove(local)
    result.registered = remaining
