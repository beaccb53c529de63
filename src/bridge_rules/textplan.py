"""The ``text`` and ``filters`` sections compiled once, for the payload rewriters.

The hot path must not compile regexes, lowercase tables or walk rule models per
request, so everything derived from these two sections is built here at load,
and a pattern that cannot be compiled is a located diagnostic at load, never a
rule that is silently skipped on the first request.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bridge_rules.diagnostics import Diagnostic, error
from bridge_rules.model import Filters, TextRules
from bridge_rules.patterns import Pattern, PatternError, check_replacement, compile_pattern
from bridge_rules.source import Span

API = "anthropic-messages"


@dataclass(frozen=True)
class TextOp:
    """One system-text substitution: a literal ``find`` or a compiled RE2 pattern."""

    find: str
    replace: str
    pattern: Pattern | None

    def apply(self, text: str) -> str:
        if self.pattern is None:
            return text.replace(self.find, self.replace) if self.find in text else text
        try:
            return self.pattern.sub(self.replace, text)
        except (IndexError, ValueError):  # checked at load; never fail a request over it
            return text


@dataclass(frozen=True, kw_only=True)
class Plan:
    system_ops: tuple[TextOp, ...] = ()
    recover_tool_calls: bool = False
    drop: frozenset[str] = frozenset()
    deny_folded: frozenset[str] = frozenset()
    dedup_bridged: bool = False

    @property
    def filters_tools(self) -> bool:
        return bool(self.drop or self.deny_folded or self.dedup_bridged)


def compile_plan(
    text: TextRules | None,
    filters: Filters | None,
    locate: Callable[[int, str], Span],
) -> tuple[Plan, list[Diagnostic]]:
    """The plan, and BR201/BR202 for text patterns (``locate(i, key)``: rule ``i``'s key)."""
    ops: list[TextOp] = []
    diags: list[Diagnostic] = []
    for index, rule in enumerate(text.system if text is not None else ()):
        if not rule.find:
            continue
        pattern = None
        if rule.regex:
            try:
                pattern = compile_pattern(rule.find)
            except PatternError as exc:
                diags.append(error(exc.code, str(exc), locate(index, "find")))
                continue
            try:
                check_replacement(pattern, rule.replace)
            except PatternError as exc:
                diags.append(error(exc.code, str(exc), locate(index, "replace")))
                continue
        ops.append(TextOp(rule.find, rule.replace, pattern))
    deny: set[str] = set()
    if filters is not None:
        for capability in filters.deny:
            deny.update(n.lower() for n in filters.capabilities.get(capability, []))
    plan = Plan(
        system_ops=tuple(ops),
        recover_tool_calls=bool(text and text.recover_tool_calls),
        drop=frozenset(filters.drop if filters else ()),
        deny_folded=frozenset(deny),
        dedup_bridged=bool(filters and filters.dedup_bridged),
    )
    return plan, diags
