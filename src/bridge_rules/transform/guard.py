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

What the tools say (:func:`wire_verdict`) depends on them and the rules alone, so the
outbound cache keeps it with them; :func:`apply_verdict` applies it to one result.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol, TypeVar

from bridge_rules.names import name_problems
from bridge_rules.runtime import Runtime


class _Result(Protocol):
    """The fields of ``OutboundResult`` this module reads and writes."""

    payload: Any
    registered: list[str]
    dropped: list[str]
    rejected: str | None


R = TypeVar("R", bound=_Result)

_UNTYPED = ("", "custom")


class Verdict(NamedTuple):
    """What ``wire_names`` says of one request's tools; a function of them and the rules."""

    problems: tuple[str, ...] = ()
    """Why the request must be refused (empty: it may be sent)."""
    drop: frozenset[int] = frozenset()
    """Positions in ``tools[]`` that ``on_collision: first`` leaves out."""
    dropped: tuple[str, ...] = ()
    """Their local names."""


NOTHING = Verdict()


def _sent(tools: Any, registered: list[str]) -> list[tuple[int, str, str, bool]]:
    """(position in tools[], local name, wire name, typed) of every named tool sent."""
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
    guard = rt.rules.wire_names
    problems = []
    for _i, local, wire, typed in sent:
        if typed:
            continue
        reasons = name_problems(wire, guard)
        if not reasons:
            continue
        named = f"'{local}'" if local == wire else f"'{local}' (sent as '{wire}')"
        problems.append(f"tool {named} " + " and ".join(reasons))
    return problems


def wire_verdict(rt: Runtime, tools: Any, registered: list[str]) -> Verdict:
    """The verdict on ``tools`` as they will be sent, ``registered`` their local names."""
    guard = rt.rules.wire_names
    sent = _sent(tools, registered)
    if not sent:
        return NOTHING
    problems = _invalid(rt, sent) if guard.on_invalid == "error" else []
    by_wire: dict[str, list[tuple[int, str]]] = {}
    for i, local, wire, _typed in sent:
        by_wire.setdefault(wire, []).append((i, local))
    clashes = {w: sharing for w, sharing in by_wire.items() if len(sharing) > 1}
    drop: frozenset[int] = frozenset()
    dropped: tuple[str, ...] = ()
    if clashes and guard.on_collision == "first":
        drop = frozenset(i for sharing in clashes.values() for i, _local in sharing[1:])
        dropped = tuple(local for sharing in clashes.values() for _i, local in sharing[1:])
    elif clashes:
        for wire, sharing in clashes.items():
            names = " and ".join(f"'{local}'" for _i, local in sharing)
            problems.append(f"tools {names} would both be sent as '{wire}'")
    if not problems and not drop:
        return NOTHING
    return Verdict(tuple(problems), drop, dropped)


def apply_verdict(result: R, verdict: Verdict) -> R:
    """``result`` with ``rejected`` set, or the colliding tools dropped, as ``verdict`` says."""
    if verdict.drop:
        tools = result.payload["tools"]
        result.payload = {
            **result.payload,
            "tools": [t for i, t in enumerate(tools) if i not in verdict.drop],
        }
        result.dropped = [*result.dropped, *verdict.dropped]
        remaining = list(result.registered)
        for local in verdict.dropped:
            remaining.remove(local)
        result.registered = remaining
    if verdict.problems:
        result.rejected = (
            "bridge-rules refused the request: "
            + "; ".join(verdict.problems)
            + ". Rename the tool, add an alias with a valid wire name, or set "
            "`wire_names.on_invalid: shorten` / `on_collision: first` in the rules."
        )
    return result


__all__ = ["NOTHING", "Verdict", "apply_verdict", "wire_verdict"]
