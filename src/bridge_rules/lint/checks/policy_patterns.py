"""BR317/BR318: a policy or filter pattern that matches no tool of the pins the rules name.

``drop: mcp__terminal__*`` was silent: ``filters.drop`` takes names, not globs, so it
dropped nothing. A ``policy`` pattern (and a ``filters.drop`` name) that matches no tool
of the local pin, the Claude Code pin, ``local_tools`` or a binding is most likely a typo
or a glob where a name was meant (BR317, a warning: it may name a tool no pin lists).

A ``deny`` or ``allow`` pattern that matches nothing but is a small edit away from a known
tool (``deny: [Bassh]``, ``deny: [BASH]``) is a typo for certain, and a misspelt deny is a
hole: BR318, an error, so CI fails on it. Only checked when the rules name a pin.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator

from bridge_rules.diagnostics import Diagnostic, error, warning
from bridge_rules.lint.registry import LintContext, check
from bridge_rules.source import Span


def _known(ctx: LintContext) -> list[str]:
    names: dict[str, None] = {}
    for pin in (ctx.pin, ctx.local_pin):
        if pin is not None:
            names.update(dict.fromkeys(pin.tools))
    names.update(dict.fromkeys(name for name, _span in ctx.rules.local_tools))
    for local in ctx.rules.bindings:
        names[local] = None
    runtime = ctx.runtime
    for name in list(names):
        names.setdefault(runtime.outbound_name(name), None)
    return list(names)


_GLOB = frozenset("*?[")


def _distance(a: str, b: str, limit: int) -> int:
    """Edits (insert, delete, replace, swap of neighbours) from ``a`` to ``b``, or
    ``limit + 1`` once it is certain to be more than ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    before: list[int] = []
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        now = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cost = 0 if ca == cb else 1
            now[j] = min(row[j] + 1, now[j - 1] + 1, row[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                now[j] = min(now[j], before[j - 2] + 1)
        if min(now) > limit:
            return limit + 1
        before, row = row, now
    return row[-1]


def near_miss(pattern: str, known: list[str]) -> str | None:
    """The known tool a plain (glob-free) pattern is a typo of: the same name in another
    case, or one or two edits away (one for names of four characters or fewer)."""
    if _GLOB & set(pattern):
        return None
    low = pattern.lower()
    for name in known:
        if name.lower() == low:
            return name
    limit = 1 if len(pattern) <= 4 else 2
    best: tuple[int, int, str] | None = None
    for name in known:
        d = _distance(low, name.lower(), limit)
        if d > limit:
            continue
        found = (d, _distance(pattern, name, limit + len(name)), name)  # ties: the same case
        if best is None or found[:2] < best[:2]:
            best = found
    return None if best is None else best[2]


def _patterns(ctx: LintContext) -> Iterator[tuple[str, Span, str]]:
    policy = ctx.runtime.policy
    for rule in (*policy.deny, *(policy.allow or ())):
        if not rule.key.startswith("switches."):
            yield rule.pattern, rule.span, f"policy.{rule.key} pattern"
    for file in ctx.files:
        filters = file.rules.filters
        for index, name in enumerate(filters.drop if filters is not None else ()):
            yield name, ctx.span(file, ("filters", "drop", index), value=True), "filters.drop name"


@check("policy-patterns", codes=("BR317", "BR318"))
def unmatched_patterns(ctx: LintContext) -> Iterator[Diagnostic]:
    """Every policy pattern and dropped name should match a tool the pins know."""
    if ctx.pin is None and ctx.local_pin is None:
        return
    known = _known(ctx)
    for pattern, span, what in _patterns(ctx):
        if any(fnmatch.fnmatchcase(name, pattern) for name in known):
            continue
        near = near_miss(pattern, known) if what.startswith("policy") else None
        if near is not None:
            yield error(
                "BR318",
                f"{what} '{pattern}' matches no tool of the pinned tools, so it "
                f"{'denies' if 'deny' in what else 'allows'} nothing",
                span,
                hint=f"did you mean '{near}'?",
            )
            continue
        hint = None
        if "*" in pattern and what.startswith("filters"):
            hint = "filters.drop takes names, not patterns; use policy.deny for a glob"
        yield warning(
            "BR317", f"{what} '{pattern}' matches no tool of the pinned tools", span, hint=hint
        )
