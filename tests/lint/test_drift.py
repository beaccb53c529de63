"""``drift``: renamed, replaced, removed and changed tools between pins, and the rules touched."""

from __future__ import annotations

import json

import pytest

from bridge_rules.cli.app import main
from bridge_rules.drift import compare, drift
from bridge_rules.engine import load
from bridge_rules.pins import load_pin

OLD, NEW = load_pin("claude-code@2.1.0"), load_pin("claude-code@2.1.330")


def _by_detail() -> dict[str, str]:
    return {c.detail: c.kind for c in compare(OLD, NEW).changes}


def test_tools_are_matched_by_interface_and_alias() -> None:
    changes = _by_detail()
    assert changes["Task renamed Agent (AgentInput)"] == "tool-renamed"
    assert changes["KillShell removed; an alias of TaskStop in 2.1.330"] == "tool-replaced"
    assert changes["TaskOutput removed"] == "tool-removed"
    assert changes["TaskStop added"] == "tool-added"
    assert "Agent added" not in changes
    assert "Task removed" not in changes


def test_field_changes_are_dotted_paths_with_required_ness() -> None:
    changes = _by_detail()
    assert changes["Read.allow_large added"] == "field-added"
    assert changes["ExitPlanMode.allowedPrompts[].tool added (required)"] == "field-added"
    assert changes["Agent.subagent_type is optional now"] == "field-required"
    assert changes["Agent.resume removed"] == "field-removed"


def test_a_pin_does_not_drift_from_itself() -> None:
    assert compare(NEW, NEW).changes == []


def test_changes_point_at_the_rules_they_touch() -> None:
    rules = load("pi-anthropic-messages").rules
    report = drift(OLD, NEW, rules)
    removed = next(c for c in report.changes if c.detail == "TaskOutput removed")
    spans = [str(span) for _what, span in removed.touches]
    assert len(spans) == 1
    assert spans[0].endswith("profiles/pi-anthropic-messages.yaml:37:63")
    renamed = next(c for c in report.changes if c.kind == "tool-renamed")
    assert {what for what, _span in renamed.touches} == {
        "stage 'cc-canonical-names' entry 'Agent'",
        "stage 'cc-canonical-names' entry 'Task'",
    }
    untouched = next(c for c in report.changes if c.detail == "Workflow added")
    assert untouched.touches == ()


def test_cli(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["drift", "--from", "claude-code@2.1.322", "--to", "claude-code@2.1.330"]
    assert main([*argv, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["from"] == "claude-code@2.1.322"
    assert {c["detail"] for c in doc["changes"]} >= {"ReportFindings.findings[].severity added"}
    assert main(["drift", "--from", "claude-code@1.0.0", "--to", "claude-code@2.1.330"]) == 2
    assert main(["drift", "--from", "pi@0.73.1", "--to", "claude-code@2.1.330"]) == 2


def test_only_drift_with_rules_says_how_many_changes_touch_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["drift", "--from", "claude-code@2.1.0", "--to", "claude-code@2.1.330"]
    assert main(argv) == 0
    assert "touch the given rules" not in capsys.readouterr().out
    assert main([*argv, "--rules", "default"]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.endswith(" of them touch the given rules")
    assert not last.startswith("0 ")
