"""Field paths compiled once: dotted paths become direct dict lookups, ``$`` paths JSONPath.

jsonpath-ng is about 60x slower than a direct loop on large inputs, so it is
only used for paths a dotted name cannot say (wildcards, filters, indexes).
Every accessor tolerates any JSON shape: a missing or mistyped step is "absent".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

MISSING: Any = object()


class PathError(ValueError):
    """A path expression that does not parse (reported as a located diagnostic)."""


@dataclass(frozen=True)
class SimplePath:
    """``a.b.c``: a chain of object keys."""

    text: str
    keys: tuple[str, ...]

    @property
    def top(self) -> str:
        return self.keys[0]

    def get(self, obj: dict[str, Any]) -> Any:
        cur: Any = obj
        for key in self.keys:
            if not isinstance(cur, dict) or key not in cur:
                return MISSING
            cur = cur[key]
        return cur

    def set(self, obj: dict[str, Any], value: Any) -> None:
        """Set the value, copying intermediate objects so the caller's input is never mutated."""
        cur = obj
        for key in self.keys[:-1]:
            nxt = cur.get(key)
            nxt = dict(nxt) if isinstance(nxt, dict) else {}
            cur[key] = nxt
            cur = nxt
        cur[self.keys[-1]] = value

    def pop(self, obj: dict[str, Any]) -> Any:
        """Remove and return the value; parents left empty by the removal are removed too."""
        if len(self.keys) == 1:
            return obj.pop(self.keys[0], MISSING)
        if self.get(obj) is MISSING:
            return MISSING
        chain: list[dict[str, Any]] = [obj]
        cur = obj
        for key in self.keys[:-1]:
            copied = dict(cur[key])
            cur[key] = copied
            chain.append(copied)
            cur = copied
        value = cur.pop(self.keys[-1])
        for depth in range(len(chain) - 1, 0, -1):
            if chain[depth]:
                break
            del chain[depth - 1][self.keys[depth - 1]]
        return value


@dataclass(frozen=True)
class JsonPath:
    """A ``$``-rooted JSONPath ending in a field: operations act on that field of every match."""

    text: str
    parents: Callable[[Any], list[Any]]
    last: str


# Expressions are compiled by recursive-descent parsers: bound what they are given.
MAX_EXPR_CHARS = 1000
MAX_EXPR_DEPTH = 32


def expression_problem(text: str, kind: str) -> str | None:
    """Why ``text`` is too long or too deeply nested to compile, or None."""
    if len(text) > MAX_EXPR_CHARS:
        return f"{kind} is {len(text)} characters long; the limit is {MAX_EXPR_CHARS}"
    depth = deepest = 0
    for ch in text:
        if ch in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in ")]}":
            depth -= 1
    if deepest > MAX_EXPR_DEPTH:
        return f"{kind} nests {deepest} brackets deep; the limit is {MAX_EXPR_DEPTH}"
    return None


def compile_path(text: str) -> SimplePath | JsonPath:
    problem = expression_problem(text, "path")
    if problem is not None:
        raise PathError(problem)
    if not text.startswith("$"):
        if not text or any(not part for part in text.split(".")):
            raise PathError(f"'{text}' is not a field path (empty segment)")
        return SimplePath(text, tuple(text.split(".")))
    # Imported only when a rule needs JSONPath.
    from jsonpath_ng.jsonpath import Child, Fields
    from jsonpath_ng.parser import parse

    try:
        expr = parse(text)
    except Exception as exc:  # jsonpath-ng raises several unrelated exception types
        reason = " ".join(str(exc).split())[:200]
        raise PathError(f"invalid JSONPath '{text}': {reason}") from None
    if not (
        isinstance(expr, Child) and isinstance(expr.right, Fields) and len(expr.right.fields) == 1
    ):
        raise PathError(f"JSONPath '{text}' must end in one field name, e.g. '$.edits[*].old'")
    return JsonPath(text, expr.left.find, str(expr.right.fields[0]))
