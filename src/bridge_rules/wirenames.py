"""Tool names the Anthropic Messages API accepts, and MCP name shape.

The API accepts tool names matching ``^[a-zA-Z0-9_-]{1,64}$``; Claude Code
reads ``mcp__<server>__<tool>`` by splitting at the first ``__`` after the
``mcp__``, so a server segment cannot itself contain ``__``. One home for these
rules: lint, ``explain`` and the runtime all ask here.
"""

from __future__ import annotations

import hashlib
import re

WIRE_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MAX_LEN = 64
_ALLOWED = re.compile(r"[a-zA-Z0-9_-]")
_NOT_ALLOWED = re.compile(r"[^a-zA-Z0-9_-]")
_CHARS = re.compile(r"[a-zA-Z0-9_-]+")
_LEAD = re.compile(r"[a-zA-Z_]")


def is_valid(name: str, max_len: int = MAX_LEN) -> bool:
    """The API's rule, with the length limit the rules configure."""
    return 0 < len(name) <= max_len and _CHARS.fullmatch(name) is not None


def shorten(name: str, max_len: int = MAX_LEN, *, letter_first: bool = False) -> str:
    """A valid name for ``name``: deterministic, and distinct for distinct names.

    Characters the API refuses become ``_``; whenever anything changes, an 8-digit
    hash of the whole original goes at the end (cut to fit ``max_len``), so
    ``a.b`` and an existing ``a_b`` never meet. Reversible through the reverse map,
    which holds every registered name's wire name. ``letter_first`` (a target such as
    Gemini) also refuses a name that starts with a digit or ``-``; such a name gets a
    ``_`` in front, and the hash.
    """
    lead_ok = not letter_first or _LEAD.match(name) is not None
    if lead_ok and is_valid(name, max_len):
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    clean = _NOT_ALLOWED.sub("_", name)
    if letter_first and _LEAD.match(clean) is None:
        clean = "_" + clean
    if max_len <= len(digest) + 1:
        return ("_" + digest if letter_first else digest)[:max_len]
    return clean[: max_len - len(digest) - 1] + "_" + digest


def name_problems(name: str, max_len: int = MAX_LEN) -> list[str]:
    """Every reason the API would reject ``name`` (phrases after "name X ..."); empty if none.

    ``max_len``: the limit the rules configure (``wire_names.max_length``).
    """
    if is_valid(name, max_len):
        return []
    if not name:
        return ["is empty"]
    problems = []
    if len(name) > max_len:
        who = "the API allows" if max_len == MAX_LEN else "the rules allow"
        problems.append(f"is {len(name)} characters long ({who} at most {max_len})")
    bad = sorted({c for c in name if not _ALLOWED.match(c)})
    if bad:
        problems.append(
            "contains " + ", ".join(repr(c) for c in bad) + " (allowed: a-z A-Z 0-9 _ -)"
        )
    return problems


def name_problem(name: str, max_len: int = MAX_LEN) -> str | None:
    """The reasons of :func:`name_problems` in one phrase, or None."""
    return " and ".join(name_problems(name, max_len)) or None


def mcp_problem(name: str) -> str | None:
    """Why ``name`` (starting with ``mcp__``) is not ``mcp__<server>__<tool>``, or None."""
    server, sep, tool = name[len("mcp__") :].partition("__")
    if not sep or not server:
        return "is not of the form mcp__<server>__<tool>"
    if not tool:
        return "has an empty tool segment (mcp__<server>__<tool>)"
    return None
