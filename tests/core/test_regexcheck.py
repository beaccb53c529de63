"""Hostile regexes are refused before anything runs them; ordinary ones compile."""

from __future__ import annotations

import pytest

from bridge_rules.regexcheck import RegexProblem, compile_safe

REFUSED = ["(a+)+$", "(a*)*", r"(\w+\s?)*$", "(a|a)*b", "(x+x+)+y", "((ab)*)+c", "a" * 1001]
ACCEPTED = [
    "(?i)claude",
    "^mcp__[a-z0-9-]+__",
    r"claude-(opus|sonnet)-\d+",
    "(a|ab)*c",
    r"(\w|\d)+",
    "a{1,5}b",
    r"^(mcp__)?[A-Za-z0-9_-]+$",
    ".*claude.*",
]


@pytest.mark.parametrize("pattern", REFUSED)
def test_catastrophic_patterns_are_refused(pattern: str) -> None:
    with pytest.raises(RegexProblem) as info:
        compile_safe(pattern)
    assert info.value.code == "BR202"


@pytest.mark.parametrize("pattern", ACCEPTED)
def test_ordinary_patterns_compile(pattern: str) -> None:
    assert compile_safe(pattern).pattern == pattern


def test_invalid_pattern_is_br201() -> None:
    with pytest.raises(RegexProblem) as info:
        compile_safe("(claude")
    assert info.value.code == "BR201"
