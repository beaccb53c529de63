"""BR201/BR202 for the regexes the compiler does not compile: ``text`` rules with ``regex: true``.

Gate and passthrough patterns are compiled (and reported) by the compiler; text
rules are applied later, so lint compiles them with the same safety check.
"""

from __future__ import annotations

from collections.abc import Iterator

from bridge_rules.diagnostics import Diagnostic, error
from bridge_rules.lint.registry import LintContext, check
from bridge_rules.regexcheck import RegexProblem, compile_safe


@check("text-regexes", codes=("BR201", "BR202"))
def text_regexes(ctx: LintContext) -> Iterator[Diagnostic]:
    """Every ``text.system`` rule with ``regex: true`` compiles and cannot backtrack badly."""
    for file in ctx.files:
        text = file.rules.text
        if text is None:
            continue
        for index, rule in enumerate(text.system):
            if not rule.regex:
                continue
            try:
                compile_safe(rule.find)
            except RegexProblem as exc:
                span = ctx.span(file, ("text", "system", index, "find"), value=True)
                yield error(exc.code, str(exc), span)
