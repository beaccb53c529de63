"""Tool names the Anthropic Messages API accepts, and MCP name shape.

The API accepts tool names matching ``^[a-zA-Z0-9_-]{1,64}$``; Claude Code
reads ``mcp__<server>__<tool>`` by splitting at the first ``__`` after the
``mcp__``, so a server segment cannot itself contain ``__``. One home for these
rules: lint, ``explain`` and the runtime all ask here.
"""

from __future__ import annotations

import re

WIRE_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MAX_LEN = 64
_ALLOWED = re.compile(r"[a-zA-Z0-9_-]")


def name_problems(name: str) -> list[str]:
    """Every reason the API would reject ``name`` (phrases after "name X ..."); empty if none."""
    if WIRE_NAME.match(name):
        return []
    if not name:
        return ["is empty"]
    problems = []
    if len(name) > MAX_LEN:
        problems.append(f"is {len(name)} characters long (the API allows at most {MAX_LEN})")
    bad = sorted({c for c in name if not _ALLOWED.match(c)})
    if bad:
        problems.append(
            "contains " + ", ".join(repr(c) for c in bad) + " (allowed: a-z A-Z 0-9 _ -)"
        )
    return problems


def name_problem(name: str) -> str | None:
    """The reasons of :func:`name_problems` in one phrase, or None."""
    return " and ".join(name_problems(name)) or None


def mcp_problem(name: str) -> str | None:
    """Why ``name`` (starting with ``mcp__``) is not ``mcp__<server>__<tool>``, or None."""
    server, sep, tool = name[len("mcp__") :].partition("__")
    if not sep or not server:
        return "is not of the form mcp__<server>__<tool>"
    if not tool:
        return "has an empty tool segment (mcp__<server>__<tool>)"
    return None
