"""BR312: a ``wire_names.max_length`` the Messages API would not accept."""

from __future__ import annotations

from collections.abc import Iterator

from bridge_rules.diagnostics import Diagnostic, warning
from bridge_rules.lint.registry import LintContext, check
from bridge_rules.wirenames import MAX_LEN


@check("wire-names-limit", codes=("BR312",))
def wire_names_limit(ctx: LintContext) -> Iterator[Diagnostic]:
    """``max_length`` above the API's own limit lets through names the API refuses."""
    guard = ctx.rules.wire_names
    if guard.max_length <= MAX_LEN or guard.span is None:
        return
    for file in reversed(ctx.files):
        section = file.rules.wire_names
        if section is not None and "max_length" in section.model_fields_set:
            yield warning(
                "BR312",
                f"wire_names.max_length is {guard.max_length}, but the Messages API refuses "
                f"tool names longer than {MAX_LEN}: such names are sent and the request fails "
                "upstream",
                ctx.span(file, ("wire_names", "max_length"), value=True),
            )
            return
