"""BR317: a policy or filter pattern that matches no tool of the pins the rules name.

``drop: mcp__terminal__*`` was silent: ``filters.drop`` takes names, not globs, so it
dropped nothing. A ``policy`` pattern (and a ``filters.drop`` name) that matches no tool
of the local pin, the Claude Code pin, ``local_tools`` or a binding is most likely a typo
or a glob where a name was meant. Only checked when the rules name a pin.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator

from bridge_rules.diagnostics import Diagnostic, warning
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


def _patterns(ctx: LintContext) -> Iterator[tuple[str, Span, str]]:
    policy = ctx.runtime.policy
    for rule in (*policy.deny, *(policy.allow or ())):
        if not rule.key.startswith("switches."):
            yield rule.pattern, rule.span, f"policy.{rule.key} pattern"
    for file in ctx.files:
        filters = file.rules.filters
        for index, name in enumerate(filters.drop if filters is not None else ()):
            yield name, ctx.span(file, ("filters", "drop", index), value=True), "filters.drop name"


@check("policy-patterns", codes=("BR317",))
def unmatched_patterns(ctx: LintContext) -> Iterator[Diagnostic]:
    """Every policy pattern and dropped name should match a tool the pins know."""
    if ctx.pin is None and ctx.local_pin is None:
        return
    known = _known(ctx)
    for pattern, span, what in _patterns(ctx):
        if any(fnmatch.fnmatchcase(name, pattern) for name in known):
            continue
        hint = None
        if "*" in pattern and what.startswith("filters"):
            hint = "filters.drop takes names, not patterns; use policy.deny for a glob"
        yield warning(
            "BR317", f"{what} '{pattern}' matches no tool of the pinned tools", span, hint=hint
        )
