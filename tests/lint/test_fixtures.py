"""Data-driven check cases: ``fixtures/<case>.yaml`` and, for failing cases, the expected report.

``*-fail.yaml`` must produce exactly the lines in ``<case>.expected`` (the text
reporter's output); ``*-pass.yaml`` must produce no finding at all. Set
``BRIDGE_RULES_UPDATE_GOLDEN=1`` to rewrite the expected files, then review the diff.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from bridge_rules.diagnostics import Severity
from bridge_rules.lint.runner import lint
from bridge_rules.reporters import Summary
from bridge_rules.reporters.text import report

FIXTURES = Path(__file__).resolve().parent / "fixtures"
FAILING = sorted(FIXTURES.glob("*-fail.yaml"))
PASSING = sorted(FIXTURES.glob("*-pass.yaml"))


def _render(path: Path) -> str:
    result = lint([path.name])
    summary = Summary(
        1,
        result.count(Severity.ERROR),
        result.count(Severity.WARNING),
        result.count(Severity.INFO),
        result.suppressed,
    )
    out = io.StringIO()
    report(result.diagnostics, summary, out)
    return out.getvalue()


@pytest.fixture(autouse=True)
def _in_fixtures(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(FIXTURES)  # reported paths are relative to the working directory


def test_every_failing_case_has_a_passing_twin() -> None:
    assert {p.name.replace("-fail", "-pass") for p in FAILING} == {p.name for p in PASSING}


@pytest.mark.parametrize("path", FAILING, ids=lambda p: p.stem)
def test_failing_case(path: Path) -> None:
    expected = path.with_suffix(".expected")
    got = _render(path)
    if os.environ.get("BRIDGE_RULES_UPDATE_GOLDEN") == "1":
        expected.write_text(got, encoding="utf-8")
    assert got == expected.read_text(encoding="utf-8")
    code = path.stem.split("-")[0].upper()
    if code.startswith("BR"):
        assert f"[{code}]" in got


@pytest.mark.parametrize("path", PASSING, ids=lambda p: p.stem)
def test_passing_case(path: Path) -> None:
    assert lint([path.name]).diagnostics == []
