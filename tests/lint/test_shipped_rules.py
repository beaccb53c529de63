"""The project's own linter runs on every shipped rule file and profile: clean, except for
findings a profile reproduces on purpose and suppresses explicitly, with a reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge_rules.lint.runner import lint, lint_target
from bridge_rules.resources import profile_names, profile_path

ROOT = Path(__file__).resolve().parents[2]


def test_shipped_rules_are_clean() -> None:
    report = lint()
    assert [d.line() for d in report.diagnostics] == []
    assert len(report.targets) == len(profile_names()) >= 6


@pytest.mark.parametrize("name", profile_names())
def test_each_profile_is_clean_on_its_own(name: str) -> None:
    assert lint_target(name).diagnostics == []


def test_suppressions_are_explicit_and_still_needed(tmp_path: Path) -> None:
    """Without its suppress: list, pi-anthropic-messages reports the names 2.1.330 lacks."""
    path = profile_path("pi-anthropic-messages")
    assert path is not None
    text = path.read_text(encoding="utf-8")
    assert "reason:" in text
    stripped = tmp_path / "pi-anthropic-messages.yaml"
    stripped.write_text(text.split("\nsuppress:\n")[0] + "\n", encoding="utf-8")
    lines = [d.line() for d in lint_target(stripped).diagnostics]
    assert any(
        "canonical name 'TaskOutput' is not a tool of claude-code@2.1.330; present in 2.1.0" in line
        for line in lines
    )
    assert any("'KillShell' is an alias of 'TaskStop'" in line for line in lines)
    assert lint_target(path).suppressed
