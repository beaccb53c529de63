"""BR203 and BR302: several local tools going out under one wire name.

BR203 comes from the resolver's own reverse map (the one inbound resolution
uses), so lint and the runtime agree on what collides, case-insensitive
collisions included. This is the only place collisions are reported; ``load()``
runs it too, with the same suppressions. BR302 covers what the reverse map cannot see: a renaming
entry whose target is a name the rules also declare as passing through
unchanged, so a local tool of that name and the renamed one would both be sent.
"""

from __future__ import annotations

from collections.abc import Iterator

from bridge_rules.diagnostics import Diagnostic, Related, warning
from bridge_rules.lint.entries import table_of, written_entries
from bridge_rules.lint.registry import LintContext, check
from bridge_rules.source import Span


@check("collisions", codes=("BR203",))
def collisions(ctx: LintContext) -> Iterator[Diagnostic]:
    """Two local tools resolving to one wire name (exactly or ignoring case)."""
    anchor = ctx.files[-1].doc.source_map.key_span(())
    for found in ctx.runtime.resolver.reverse_map(None).collisions:
        spans = [s for s in found.spans if s is not None]
        span = spans[-1] if spans else anchor
        related = tuple(Related("also resolves here", s) for s in dict.fromkeys(spans) if s != span)
        yield warning("BR203", found.describe(), span, related=related)


@check("pass-through-collisions", codes=("BR302",))
def renamed_onto_pass_through(ctx: LintContext) -> Iterator[Diagnostic]:
    """A renaming entry targets a name the rules list as passing through unchanged."""
    resolver = ctx.runtime.resolver
    if not any(s.kind in ("canonical", "passthrough") for s in ctx.rules.stages):
        return  # nothing passes through, so nothing can be sent twice
    for entry in written_entries(ctx.rules):
        if not entry.renames or entry.wire == entry.key:
            continue
        out = resolver.outbound(entry.wire)
        stage = out.stage
        if (
            stage is None
            or out.wire != entry.wire
            or stage.kind not in ("canonical", "passthrough")
        ):
            continue
        table = table_of(stage)
        listed = table is not None and table.match(entry.wire) is not None
        hit_span: Span | None = out.hit.span if out.hit else None
        if not listed or hit_span is None or hit_span == ctx.rules.pin_span:
            continue
        yield warning(
            "BR302",
            f"'{entry.key}' is renamed to '{entry.wire}', which the rules also pass through "
            f"unchanged; a local tool named '{entry.wire}' would be sent twice",
            entry.span,
            related=(Related(f"'{entry.wire}' passes through here", hit_span),),
            hint="drop one of the two rules, or keep the pair only if both tools never coexist",
        )
