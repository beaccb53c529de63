"""Compile user regexes once, refusing the ones that can backtrack catastrophically.

Rule files are data from other people; a pattern such as ``(a+)+$`` applied
to a hostile model id or tool name would hang a proxy worker. Python's ``re``
has no timeout, so risky shapes are rejected before anything runs them:

* an unbounded repeat whose body can itself repeat without bound
  (``(a+)+``, ``(a*)*``, ``(\\w+\\s?)*``);
* an unbounded repeat over alternatives that can start with the same character
  or that can both match nothing (``(a|a)*``), judged after
  Python's own parser has factored common prefixes out (which makes ``(a|ab)*``
  and ``(\\w|\\d)+`` harmless, so they pass).

This is a conservative static check (it may refuse a pattern that is in fact
safe); the message says which construct it objected to.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

try:  # Python 3.11+ (the sre_* names warn there)
    _c: Any = importlib.import_module("re._constants")
    _p: Any = importlib.import_module("re._parser")
except ImportError:  # pragma: no cover - Python 3.10
    _c = importlib.import_module("sre_constants")
    _p = importlib.import_module("sre_parse")

MAXREPEAT = _c.MAXREPEAT
_REPEATS = {_c.MAX_REPEAT, _c.MIN_REPEAT, getattr(_c, "POSSESSIVE_REPEAT", None)}
_REPEATS.discard(None)
_BIG = 32


class RegexProblem(ValueError):
    """``code`` is BR201 (does not compile) or BR202 (catastrophic backtracking)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def _unbounded(hi: int) -> bool:
    return hi == MAXREPEAT or hi > _BIG


def _can_repeat(items: Any) -> bool:
    """Whether a subpattern contains an unbounded repeat."""
    for op, arg in items:
        if op in _REPEATS:
            _lo, hi, body = arg
            if _unbounded(hi) or _can_repeat(body):
                return True
        elif op is _c.SUBPATTERN and _can_repeat(arg[-1]):
            return True
        elif op is _c.BRANCH and any(_can_repeat(b) for b in arg[1]):
            return True
    return False


def _first_chars(items: Any) -> set[object] | None:
    """The possible first characters of a subpattern (None = could be anything)."""
    for op, arg in items:
        if op is _c.LITERAL:
            return {arg}
        if op is _c.SUBPATTERN:
            return _first_chars(arg[-1])
        if op is _c.BRANCH:
            out: set[object] = set()
            for branch in arg[1]:
                first = _first_chars(branch)
                if first is None:
                    return None
                out |= first
            return out
        if op in (_c.AT,):
            continue
        return None
    return set()


def _overlapping_branches(items: Any) -> bool:
    for op, arg in items:
        if op is _c.SUBPATTERN:
            return _overlapping_branches(arg[-1])
        if op is _c.BRANCH:
            seen: set[object] = set()
            empties = 0
            for branch in arg[1]:
                if not branch:  # two ways to match nothing: every repeat doubles the work
                    empties += 1
                    if empties > 1:
                        return True
                    continue
                first = _first_chars(branch)
                if first is None or first & seen:
                    return True
                seen |= first
    return False


def _scan(items: Any) -> str | None:
    for op, arg in items:
        if op in _REPEATS:
            _lo, hi, body = arg
            if _unbounded(hi):
                if _can_repeat(body):
                    return "a repeated group that itself repeats (nested quantifiers)"
                if _overlapping_branches(body):
                    return "a repeated alternation whose branches can match the same text"
            found = _scan(body)
            if found:
                return found
        elif op is _c.SUBPATTERN:
            found = _scan(arg[-1])
            if found:
                return found
        elif op is _c.BRANCH:
            for branch in arg[1]:
                found = _scan(branch)
                if found:
                    return found
    return None


def compile_safe(pattern: str) -> re.Pattern[str]:
    """Compile ``pattern`` or raise :class:`RegexProblem`."""
    if len(pattern) > 1000:
        raise RegexProblem("BR202", "pattern is longer than 1000 characters")
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise RegexProblem("BR201", f"invalid regular expression {pattern!r}: {exc}") from None
    danger = _scan(_p.parse(pattern))
    if danger:
        raise RegexProblem(
            "BR202",
            f"regular expression {pattern!r} is prone to catastrophic backtracking: {danger}",
        )
    return compiled
