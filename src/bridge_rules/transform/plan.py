"""What the payload rewriters need from the rules, computed once per engine.

The hot path must not compile regexes, lowercase tables or walk rule models per
request, so everything derived from ``text`` and ``filters`` lives here and is
cached beside the engine (weakly, so a dropped engine takes its plan with it).
"""

from __future__ import annotations

import re
import threading
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bridge_rules.regexcheck import RegexProblem, compile_safe

if TYPE_CHECKING:
    from bridge_rules.engine import Engine

API = "anthropic-messages"


@dataclass(frozen=True)
class TextOp:
    """One system-text substitution: a literal ``find`` or a compiled pattern."""

    find: str
    replace: str
    pattern: re.Pattern[str] | None

    def apply(self, text: str) -> str:
        if self.pattern is None:
            return text.replace(self.find, self.replace) if self.find in text else text
        try:
            return self.pattern.sub(self.replace, text)
        except (re.error, IndexError):  # a bad group reference in `replace`: leave the text
            return text


@dataclass(frozen=True)
class Plan:
    system_ops: tuple[TextOp, ...]
    recover_tool_calls: bool
    drop: frozenset[str]
    deny_folded: frozenset[str]
    dedup_bridged: bool
    skipped_patterns: tuple[str, ...]

    @property
    def filters_tools(self) -> bool:
        return bool(self.drop or self.deny_folded or self.dedup_bridged)


def _build(engine: Engine) -> Plan:
    rules = engine.rules
    ops: list[TextOp] = []
    skipped: list[str] = []
    if rules.text is not None:
        for rule in rules.text.system:
            if not rule.find:
                continue
            pattern = None
            if rule.regex:
                try:
                    pattern = compile_safe(rule.find)
                except RegexProblem:
                    skipped.append(rule.find)
                    continue
            ops.append(TextOp(rule.find, rule.replace, pattern))
    filters = rules.filters
    deny: set[str] = set()
    if filters is not None:
        for capability in filters.deny:
            deny.update(n.lower() for n in filters.capabilities.get(capability, []))
    return Plan(
        system_ops=tuple(ops),
        recover_tool_calls=bool(rules.text and rules.text.recover_tool_calls),
        drop=frozenset(filters.drop if filters else ()),
        deny_folded=frozenset(deny),
        dedup_bridged=bool(filters and filters.dedup_bridged),
        skipped_patterns=tuple(skipped),
    )


_PLANS: weakref.WeakKeyDictionary[Engine, Plan] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def plan_for(engine: Engine) -> Plan:
    plan = _PLANS.get(engine)
    if plan is None:
        plan = _build(engine)
        with _LOCK:
            _PLANS[engine] = plan
    return plan
