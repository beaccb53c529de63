"""BR403-BR408: bindings checked against the pinned wire and local schemas, and their history."""

from __future__ import annotations

from collections.abc import Iterator

from bridge_rules.bindings.checks import field_problems, history_problems, loss_problems
from bridge_rules.diagnostics import Diagnostic
from bridge_rules.lint.registry import LintContext, check


@check("binding-fields", codes=("BR403", "BR404", "BR405"))
def binding_fields(ctx: LintContext) -> Iterator[Diagnostic]:
    """Adapter fields that neither the pinned wire schema nor the local schema has."""
    for adapter in ctx.rules.adapters.values():
        yield from field_problems(adapter, ctx.pin, ctx.local_pin)


@check("binding-history", codes=("BR406", "BR407"))
def binding_history(ctx: LintContext) -> Iterator[Diagnostic]:
    """A binding whose local -> wire direction is missing or lossy."""
    for adapter in ctx.rules.adapters.values():
        yield from history_problems(adapter)


@check("binding-losses", codes=("BR408",))
def binding_losses(ctx: LintContext) -> Iterator[Diagnostic]:
    """A binding that can lose what replay should give back and does not say what."""
    for adapter in ctx.rules.adapters.values():
        yield from loss_problems(adapter)
