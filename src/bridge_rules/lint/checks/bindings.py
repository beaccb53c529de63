"""BR403-BR408, BR411-BR412: bindings checked against the pinned wire and local schemas, their
history, and the description they send."""

from __future__ import annotations

from collections.abc import Iterator

from bridge_rules.bindings.checks import field_problems, history_problems, loss_problems
from bridge_rules.bindings.describe import plan_description
from bridge_rules.diagnostics import Diagnostic, warning
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


@check("binding-description", codes=("BR411", "BR412"))
def binding_description(ctx: LintContext) -> Iterator[Diagnostic]:
    """Output operations that never apply, and a pinned description the pin does not have."""
    for local, adapter in ctx.rules.adapters.items():
        b = adapter.binding
        sent = plan_description(b.wire_description, b.schema_, b.wire, ctx.pin, None)
        if b.wire_description == "pin" and not sent.promises_output:
            where = ctx.pin.spec if ctx.pin is not None else "no pin"
            yield warning(
                "BR412",
                f"'{local}' asks for {b.wire}'s pinned description, but {where} has none: the "
                "agent's own is sent",
                adapter.span,
                hint="record descriptions with `bridge-rules pin capture`, or use a pin that "
                "has them",
            )
        if adapter.output is not None and not sent.promises_output:
            yield warning(
                "BR411",
                f"the output operations of '{local}' never apply: the agent's own description "
                "is sent, and results keep the shape it describes",
                adapter.output.steps[0].span,
                hint="send a description that promises the new shape (`wire_description: pin` "
                "or a text), or remove `output:`",
            )
