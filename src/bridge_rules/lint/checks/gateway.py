"""BR309-BR311: the inbound options that undo a gateway's name mangling.

``strip_prefixes``, ``collapse_doubled_prefixes`` and ``match_registered`` only
run for a name that does not map by itself (see ``names.Resolver``); these checks
report options that can never apply, or would have to guess.
"""

from __future__ import annotations

from collections.abc import Iterator

from bridge_rules.diagnostics import Diagnostic, Related, warning
from bridge_rules.lint.entries import local_spans
from bridge_rules.lint.registry import LintContext, check
from bridge_rules.wirenames import name_problem


@check("gateway-prefixes", codes=("BR309", "BR310"))
def gateway_prefixes(ctx: LintContext) -> Iterator[Diagnostic]:
    """Prefix strips no returned name can carry; collapsing with no prefix to collapse."""
    gateway = ctx.rules.gateway
    for strip in gateway.prefixes:
        if strip.pattern is not None:
            continue
        problem = "is empty" if not strip.prefix else name_problem(strip.prefix)
        if problem is not None:
            yield warning(
                "BR309",
                f"inbound prefix strip '{strip.prefix}' {problem}, so no wire name carries it",
                strip.span,
            )
    for file in reversed(ctx.files):
        inbound = file.rules.inbound
        if inbound is None or "collapse_doubled_prefixes" not in inbound.model_fields_set:
            continue
        if inbound.collapse_doubled_prefixes and not gateway.doubled:
            yield warning(
                "BR310",
                "collapse_doubled_prefixes is on, but the rules know no prefix to collapse "
                "(no prefix or passthrough-prefix stage, no strip_prefixes)",
                ctx.span(file, ("inbound", "collapse_doubled_prefixes")),
            )
        break


@check("registered-case", codes=("BR311",))
def registered_case(ctx: LintContext) -> Iterator[Diagnostic]:
    """``match_registered: insensitive`` while known local names differ only in case."""
    gateway = ctx.rules.gateway
    if gateway.match_registered != "insensitive" or gateway.span is None:
        return
    by_lower: dict[str, list[str]] = {}
    spans = local_spans(ctx.rules)
    for name in spans:
        by_lower.setdefault(name.lower(), []).append(name)
    for names in by_lower.values():
        if len(names) < 2:
            continue
        shown = ", ".join(f"'{n}'" for n in names)
        yield warning(
            "BR311",
            f"match_registered is insensitive, but local tools {shown} differ only in case: a "
            "returned name matching them ignoring case is not mapped (no guess) when both "
            "are registered",
            gateway.span,
            related=tuple(Related(f"'{n}' is known here", spans[n]) for n in names),
        )
