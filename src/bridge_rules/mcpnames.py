"""``mcp__<server>__<tool>``: the one reader of MCP tool names.

Claude Code names an MCP tool ``mcp__`` + server + ``__`` + tool, each part with every
character outside ``[A-Za-z0-9_-]`` made ``_``. Nothing stops a server's or a tool's own
name from holding ``__`` (or starting or ending with ``_``), so a name does not say where
its server ends: ``mcp__exa__evil__steal`` is tool ``evil__steal`` of server ``exa`` or
tool ``steal`` of server ``exa__evil``. The rule here, for a boundary (``trusted_servers``):

* a name is an MCP name when it starts with ``mcp__``, in any case (``MCP__x__y`` too: an
  agent that folds case runs it as ``mcp__x__y``);
* its **possible servers** are every text between that ``mcp__`` and a later ``__`` that
  leaves a tool part (every split, overlapping ``___`` included); with no such ``__`` the
  whole rest is the server (``mcp__x``: server ``x``, no tool), and ``mcp__`` alone has the
  empty server;
* a name is trusted only when **every** possible server is trusted: ``mcp____evil__x``
  (servers ``""`` and ``__evil``) and ``mcp__exa__evil__steal`` (``exa`` and ``exa__evil``)
  pass ``trusted_servers: [exa]`` only if ``exa__evil`` and the others are trusted too.

Whatever an agent's own rules put in front of its tools (``kind: prefix``, such as pi's
``mcp__pi__``) is not a server: :func:`without_prefixes` takes it off first, so pi's ``ls``
(sent as ``mcp__pi__ls``) is not an MCP tool, while ``mcp__pi__mcp__evil__x`` is one of
server ``evil``.
"""

from __future__ import annotations

from collections.abc import Iterable

PREFIX = "mcp__"
SEP = "__"


def is_mcp(name: str) -> bool:
    """Whether ``name`` reads as an MCP tool's (``mcp__`` in any case)."""
    return name[: len(PREFIX)].lower() == PREFIX


def servers(name: str) -> tuple[str, ...]:
    """Every server ``name`` may be a tool of (see the module's rule); () for a name that
    is not an MCP name."""
    if not is_mcp(name):
        return ()
    rest = name[len(PREFIX) :]
    found: list[str] = []
    at = rest.find(SEP)
    while at >= 0:
        if at + len(SEP) < len(rest):  # a tool part is left after it
            found.append(rest[:at])
        at = rest.find(SEP, at + 1)
    return tuple(dict.fromkeys(found)) if found else (rest,)


def split(name: str) -> tuple[str, str] | None:
    """(server, tool) where the name's reading is certain: one possible server, a tool part
    free of ``__`` and neither part empty. None otherwise."""
    found = servers(name)
    if len(found) != 1 or not found[0]:
        return None
    tool = name[len(PREFIX) + len(found[0]) + len(SEP) :]
    if not tool or SEP in tool:
        return None
    return found[0], tool


def first_split(name: str) -> tuple[str, str] | None:
    """(server, tool) as the Claude Code CLI reads a name it registers or shows: the
    shortest non-empty server followed by ``__`` and a non-empty tool. For naming, never
    for a decision (see :func:`servers`). None when the name has no such reading."""
    if not name.startswith(PREFIX):
        return None
    rest = name[len(PREFIX) :]
    at = rest.find(SEP, 1)
    while at >= 0:
        if at + len(SEP) < len(rest):
            return rest[:at], rest[at + len(SEP) :]
        at = rest.find(SEP, at + 1)
    return None


def base(name: str) -> str | None:
    """The tool part ``filters.dedup_bridged`` compares with the direct tools: what follows
    the first ``__`` after ``mcp__`` (``mcp____x``: ``x``); None for a name that is not
    ``mcp__`` + something + ``__`` + something."""
    if not name.startswith(PREFIX):
        return None
    _server, sep, tool = name[len(PREFIX) :].partition(SEP)
    return tool if sep else None


def without_prefixes(name: str, prefixes: Iterable[str]) -> str:
    """``name`` with every agent prefix it starts with taken off (again and again:
    ``mcp__pi__mcp__pi__x`` -> ``x``), compared without case."""
    low = [p.lower() for p in prefixes if p]
    changed = True
    while changed:
        changed = False
        for prefix in low:
            if len(name) > len(prefix) and name[: len(prefix)].lower() == prefix:
                name = name[len(prefix) :]
                changed = True
    return name


def trusted(server_names: tuple[str, ...], trusted_servers: Iterable[str]) -> bool:
    """Whether every possible server is trusted (exact spelling)."""
    allowed = set(trusted_servers)
    return all(s in allowed for s in server_names)
