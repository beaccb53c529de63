"""BR305-BR307: names the Messages API would reject.

The rules for a valid name live in :mod:`bridge_rules.wirenames`. Names produced by
a prefix stage are checked for every local tool the rules know, because a name
that fits alone may not once ``mcp__pi__`` is in front of it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from bridge_rules.diagnostics import Diagnostic, Related, error
from bridge_rules.lint.entries import local_spans, written_entries
from bridge_rules.lint.registry import LintContext, check
from bridge_rules.stages import PrefixStage
from bridge_rules.wirenames import mcp_problem, name_problem


@check("wire-names", codes=("BR305", "BR306"))
def written_wire_names(ctx: LintContext) -> Iterator[Diagnostic]:
    """Every wire name written in the rules is one the API accepts."""
    seen: set[tuple[str, object]] = set()
    targets = [(e.wire, e.span) for e in written_entries(ctx.rules)]
    targets += [(b.binding.wire, b.span) for b in ctx.rules.bindings.values()]
    for name, span in targets:
        if (name, span) in seen:
            continue
        seen.add((name, span))
        problem = name_problem(name)
        if problem is not None:
            yield error("BR305", f"wire name '{name}' {problem}", span)
        elif name.startswith("mcp__") and (mcp := mcp_problem(name)) is not None:
            yield error("BR306", f"wire name '{name}' {mcp}", span)
    for stage in ctx.rules.stages:
        if not isinstance(stage, PrefixStage):
            continue
        value = stage.value
        if value and not re.fullmatch(r"[a-zA-Z0-9_-]*", value):
            yield error("BR305", f"prefix '{value}' {name_problem(value + 'x')}", stage.span)
        if value.startswith("mcp__"):
            server = value[len("mcp__") :]
            if not server.endswith("__") or not server[:-2] or "__" in server[:-2]:
                yield error(
                    "BR306",
                    f"prefix '{value}' does not produce mcp__<server>__<tool> names: write it "
                    "as mcp__<server>__ with a server name free of '__'",
                    stage.span,
                )


@check("prefixed-names", codes=("BR305", "BR307"))
def prefixed_names(ctx: LintContext) -> Iterator[Diagnostic]:
    """Known local tools that a prefix stage turns into names the API rejects."""
    resolver = ctx.runtime.resolver
    if not any(isinstance(s, PrefixStage) for s in ctx.rules.stages):
        return  # no prefix stage, no prefixed names
    limit = ctx.rules.wire_names.max_length
    for local, span in local_spans(ctx.rules).items():
        out = resolver.outbound(local)
        stage = out.stage
        if not isinstance(stage, PrefixStage):
            continue
        related = (Related(f"prefix stage '{stage.id}'", stage.span),)
        if len(out.wire) > limit:
            budget = limit - len(stage.value)
            yield error(
                "BR307",
                f"local tool '{local}' becomes '{out.wire}' ({len(out.wire)} characters); "
                f"after the prefix '{stage.value}' a name may have {budget}",
                span,
                related=related,
                hint="add an alias with a shorter wire name, or set wire_names.on_invalid: shorten",
            )
        elif (problem := name_problem(out.wire, limit)) is not None:
            yield error(
                "BR305",
                f"local tool '{local}' becomes '{out.wire}', which {problem}",
                span,
                related=related,
            )
