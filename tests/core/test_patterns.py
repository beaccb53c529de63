"""Rule-file regexes are compiled with RE2: linear-time matching, located refusals.

The shapes below are the ones that hung a backtracking engine (issue 9): each
must now compile and answer a hostile 10 KB input at once. The time bound is a
hang guard (a backtracking engine takes minutes to centuries here), not a
benchmark.
"""

from __future__ import annotations

import time

import pytest

import bridge_rules
from bridge_rules.patterns import PatternError, check_replacement, compile_pattern

HOSTILE = "," * 10_000
SHAPES = [
    ("(?:.*,){20}X", HOSTILE),
    ("(a+)+$", "a" * 10_000 + "b"),
    ("(a*)*b", "a" * 10_000),
    (r"(\w+\s?)*$", "ab " * 3_000 + "!"),
    ("(a|a)*b", "a" * 10_000),
    ("(.*a){12}$", "a" * 10_000 + "b"),
    ("(x+x+)+y", "x" * 10_000),
]
HANG_GUARD_S = 1.0


@pytest.mark.parametrize(("pattern", "text"), SHAPES)
def test_backtracking_shapes_match_in_linear_time(pattern: str, text: str) -> None:
    compiled = compile_pattern(pattern)
    start = time.perf_counter()
    compiled.search(text)
    compiled.match(text)
    compiled.sub("", text)
    assert time.perf_counter() - start < HANG_GUARD_S


@pytest.mark.parametrize(
    ("pattern", "code", "says"),
    [
        ("(claude", "BR201", "missing )"),
        (r"(a)\1", "BR202", "needs backtracking"),
        ("(?=a)b", "BR202", "needs backtracking"),
        ("(?<!x)y", "BR202", "needs backtracking"),
        ("(?P<n>a)(?P=n)", "BR202", "needs backtracking"),
        ("a" * 1001, "BR201", "longer than 1000"),
    ],
)
def test_refusals_say_why(pattern: str, code: str, says: str) -> None:
    with pytest.raises(PatternError) as info:
        compile_pattern(pattern)
    assert info.value.code == code
    assert says in str(info.value)


@pytest.mark.parametrize(
    "pattern",
    ["(?i)claude", "^mcp__[a-z0-9-]+__", r"claude-(opus|sonnet)-\d+", r"(\w|\d)+", "a{1,5}b"],
)
def test_ordinary_patterns_compile(pattern: str) -> None:
    assert compile_pattern(pattern).pattern == pattern


@pytest.mark.parametrize(
    ("replace", "ok"),
    [
        (r"\1", True),
        (r"\g<n>", True),
        (r"\2", False),
        (r"\g<zz>", False),
        ("x\\", False),
        (r"\\n", True),
    ],
)
def test_replacement_groups_are_checked_at_load(replace: str, ok: bool) -> None:
    compiled = compile_pattern("(?P<n>a)")
    if ok:
        check_replacement(compiled, replace)
    else:
        with pytest.raises(PatternError):
            check_replacement(compiled, replace)


def test_hostile_model_id_through_the_gate_is_fast(tmp_path: object) -> None:
    from pathlib import Path

    rules = Path(str(tmp_path)) / "r.yaml"
    rules.write_text('bridge-rules: 1\ngate:\n  model: "(?:.*,){20}X"\n', encoding="utf-8")
    eng = bridge_rules.load(rules)
    start = time.perf_counter()
    result = eng.outbound({"model": HOSTILE, "messages": []}, env={})
    assert time.perf_counter() - start < HANG_GUARD_S
    assert result.gate_open is False
