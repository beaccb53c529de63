"""``load()`` refuses exactly the rule sets that ``lint`` reports errors for.

Both go through one function (``bridge_rules.lint.analysis.analyse``); this
test holds them to it over every rule-file fixture in the repository, failing
and passing, plus the packaged profiles and a suppressed collision.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import bridge_rules
from bridge_rules.diagnostics import Severity
from bridge_rules.lint.runner import lint
from bridge_rules.resources import profile_names

TESTS = Path(__file__).resolve().parent.parent
RULE_FILES = sorted(
    [*(TESTS / "lint" / "fixtures").glob("*.yaml"), *(TESTS / "core" / "fixtures").rglob("*.yaml")]
)


def _lint_errors(target: str | Path) -> list[tuple[str, int, int, str, str]]:
    report = lint([target])
    return [
        (d.span.file, d.span.line, d.span.col, d.code, d.message)
        for d in report.diagnostics
        if d.severity is Severity.ERROR
    ]


def _load_errors(target: str | Path) -> list[tuple[str, int, int, str, str]] | None:
    try:
        bridge_rules.load(target)
    except bridge_rules.RulesError as exc:
        return [
            (d.span.file, d.span.line, d.span.col, d.code, d.message)
            for d in exc.diagnostics
            if d.severity is Severity.ERROR
        ]
    return None


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: p.stem)
def test_load_and_lint_agree(path: Path) -> None:
    lint_errors = _lint_errors(path)
    load_errors = _load_errors(path)
    if lint_errors:
        assert load_errors == lint_errors
    else:
        assert load_errors is None


def test_the_fixtures_cover_both_outcomes() -> None:
    outcomes = {_load_errors(p) is None for p in RULE_FILES}
    assert outcomes == {True, False}
    assert len(RULE_FILES) > 40


@pytest.mark.parametrize("profile", profile_names())
def test_every_packaged_profile_loads_and_lints_clean(profile: str) -> None:
    assert _lint_errors(profile) == []
    assert _load_errors(profile) is None


def test_a_collision_suppressed_with_match_is_suppressed_for_load_too(tmp_path: Path) -> None:
    rules = tmp_path / "r.yaml"
    rules.write_text(
        "bridge-rules: 1\n"
        "names:\n"
        "  - kind: aliases\n"
        "    map: {find: Glob, ls: Glob}\n"
        "suppress:\n"
        "  - {code: BR203, match: \"'find', 'ls'\", reason: both are listing tools}\n",
        encoding="utf-8",
    )
    report = lint([rules])
    assert report.suppressed == 1
    assert [d.code for d in report.diagnostics] == []
    assert bridge_rules.load(rules).diagnostics == []


def test_an_unsuppressed_collision_is_a_warning_on_load(tmp_path: Path) -> None:
    rules = tmp_path / "r.yaml"
    rules.write_text(
        "bridge-rules: 1\nnames:\n  - kind: aliases\n    map: {find: Glob, ls: Glob}\n",
        encoding="utf-8",
    )
    lint_codes = [(d.code, d.span) for d in lint([rules]).diagnostics]
    load_codes = [(d.code, d.span) for d in bridge_rules.load(rules).diagnostics]
    assert lint_codes == load_codes == [("BR203", lint_codes[0][1])]
