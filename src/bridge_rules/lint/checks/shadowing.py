"""BR303 and BR304: rules that can never decide, because an earlier stage always wins.

The first stage that matches decides, so a table entry is dead when every
spelling it accepts is already claimed by an earlier stage, and every stage
after a catch-all ``prefix`` stage is unreachable. Both are reported at the
loser, with the winner's location as related information.
"""

from __future__ import annotations

from collections.abc import Iterator

from bridge_rules.diagnostics import Diagnostic, Related, warning
from bridge_rules.lint.entries import Entry, written_entries
from bridge_rules.lint.registry import LintContext, check
from bridge_rules.stages import CompiledStage, PrefixStage


def _spellings(entry: Entry) -> list[str]:
    """The spellings an entry accepts, as far as it matters for shadowing."""
    if entry.table.case == "exact":
        return [entry.key]
    return list(dict.fromkeys([entry.key, entry.key.lower(), entry.key.upper()]))


def label(stage: CompiledStage) -> str:
    return f"'{stage.id}'" if stage.id == stage.kind else f"'{stage.id}' ({stage.kind})"


def _catch_all(ctx: LintContext) -> int | None:
    return next((i for i, s in enumerate(ctx.rules.stages) if isinstance(s, PrefixStage)), None)


@check("unreachable-stages", codes=("BR304",))
def unreachable_stages(ctx: LintContext) -> Iterator[Diagnostic]:
    """Stages after a catch-all ``prefix`` stage never see a name."""
    first = _catch_all(ctx)
    if first is None:
        return
    winner = ctx.rules.stages[first]
    for stage in ctx.rules.stages[first + 1 :]:
        yield warning(
            "BR304",
            f"stage {label(stage)} is unreachable: the prefix stage {label(winner)} "
            "before it matches every name",
            stage.span,
            related=(Related(f"catch-all stage '{winner.id}'", winner.span),),
            hint="move it before the prefix stage",
        )


@check("shadowed-entries", codes=("BR303",))
def shadowed_entries(ctx: LintContext) -> Iterator[Diagnostic]:
    """Table entries every spelling of which an earlier stage already decides."""
    resolver = ctx.runtime.resolver
    last = _catch_all(ctx)
    for entry in written_entries(ctx.rules):
        index = entry.stage.index
        if index == 0 or (last is not None and index > last):
            continue  # nothing comes before it, or the whole stage is reported as unreachable
        hits = [resolver.first_hit(s, index) for s in _spellings(entry)]
        if not hits or any(h is None for h in hits):
            continue
        stage, hit = hits[0]  # type: ignore[misc]
        what = "canonical name" if entry.stage.kind == "canonical" else "entry"
        yield warning(
            "BR303",
            f"{what} '{entry.key}' in stage {label(entry.stage)} never applies: stage "
            f"{label(stage)} already sends '{entry.key}' as '{hit.wire}'",
            entry.span,
            related=(Related(f"decided by {stage.kind} {hit.rule}", hit.span),),
        )
