"""Pins know what the binary sends: names only the type declarations list are marked in the
pin, are not canonical unless a rule says `include_declared`, and `pin show` tells them apart.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pin_fixtures import DATA

import bridge_rules
from bridge_rules.capture.document import merge
from bridge_rules.cli.app import main
from bridge_rules.drift import compare
from bridge_rules.pins import check_document, load_pin

DECLARED_ONLY_2_1_330 = {
    "Artifact",
    "ClaudeDesign",
    "OfferChromeSetup",
    "Projects",
    "propose_skills",
    "PushNotification",
    "ReadNotifications",
    "RemoteTrigger",
    "SendFeedback",
    "SetGoal",
    "ShowOnboardingRolePicker",
}


def test_the_pin_marks_what_no_capture_of_the_binary_sent() -> None:
    pin = load_pin("claude-code@2.1.330")
    runtime = json.loads((DATA / "claude-code-2.1.330.runtime.json").read_text())["tools"]
    captured = json.loads((DATA / "claude-code@2.1.330.json").read_text())["tools"]
    assert pin.declared_only == DECLARED_ONLY_2_1_330
    assert set(pin.canonical_names()) == set(runtime) | set(captured)
    assert len(pin.canonical_names()) == 35
    assert pin.canonical_names(include_declared=True) == list(pin.tools)
    # a d.ts-only pin (no capture of that version) marks nothing: there is nothing to go by
    assert load_pin("claude-code@2.1.0").declared_only == frozenset()


@pytest.mark.parametrize("name", sorted(DECLARED_ONLY_2_1_330))
def test_declared_only_names_are_not_canonical_by_default(name: str) -> None:
    assert bridge_rules.load().outbound_name(name) == "mcp__pi__" + name


@pytest.mark.parametrize("name", ["Skill", "SendMessage", "ListAgents", "TaskGet", "Monitor"])
def test_names_the_binary_sends_stay_canonical(name: str) -> None:
    assert bridge_rules.load().outbound_name(name) == name


def test_include_declared_takes_them_too(tmp_path: Path) -> None:
    rules = tmp_path / "all.yaml"
    rules.write_text(
        "bridge-rules: 1\npin: claude-code@2.1.330\nnames:\n"
        "  - kind: canonical\n    from_pin: true\n    include_declared: true\n"
        "  - kind: prefix\n    value: mcp__pi__\n",
        encoding="utf-8",
    )
    eng = bridge_rules.load(str(rules))
    assert eng.outbound_name("propose_skills") == "propose_skills"
    assert eng.outbound_name("Skill") == "Skill"


def test_pin_show_says_which_names_are_which(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pin", "show", "claude-code@2.1.330"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2] == (
        "  46 tools, 35 sent by the binary (canonical), 11 only in its type declarations "
        "(marked; not canonical unless a rule says include_declared):"
    )
    marked = {line.split()[0] for line in lines[3:] if line.endswith("(declared only)")}
    assert marked == DECLARED_ONLY_2_1_330
    assert main(["pin", "show", "claude-code@2.1.330", "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert set(shown["declared_only"]) == DECLARED_ONLY_2_1_330
    assert len(shown["sent"]) == 35
    assert "Skill" in shown["sent"]


def test_pin_check_refuses_a_mark_for_a_tool_the_pin_lacks() -> None:
    document = {"tools": {"Read": {}}, "declared_only": ["Read", "Ghost"]}
    assert check_document(document) == ["declared_only: 'Ghost' is not one of the tools"]
    assert check_document({"tools": {}, "declared_only": "Read"}) == [
        "declared_only: not a list of tool names"
    ]


def test_a_capture_that_sends_a_declared_only_tool_unmarks_it() -> None:
    entry = {"input_schema": {"type": "object"}}
    source = {"method": "runtime-capture", "date": "2026-11-26T00:00:00Z"}
    old = {
        "format": "bridge-rules-pin/1",
        "provenance": {"method": "type-declarations", "sources": []},
        "tools": {"Read": entry, "SetGoal": entry, "Artifact": entry},
        "declared_only": ["SetGoal", "Artifact"],
    }
    new = {"provenance": {"sources": [source], "date": source["date"]}, "tools": {"SetGoal": entry}}
    merged, _differ = merge(old, new)
    assert merged["declared_only"] == ["Artifact"]


def test_explain_says_why_a_declared_only_name_is_not_canonical(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["explain", "SetGoal", "--registered", "SetGoal"]) == 0
    out = capsys.readouterr().out
    assert (
        "canonical             'SetGoal' is only in claude-code@2.1.330's type declarations: "
        "the binary never sends it, so it is not canonical (`include_declared: true` takes it)"
    ) in out
    assert "SetGoal -> mcp__pi__SetGoal" in out


def test_diff_lists_tools_that_became_declared_only() -> None:
    """2.1.330 -> 2.1.331 changes no tool or field; a `from_pin` stage still loses four names,
    because the only capture of 2.1.331 had no MCP server to make the binary send them."""
    report = compare(load_pin("claude-code@2.1.330"), load_pin("claude-code@2.1.331"))
    assert [(c.kind, c.tool) for c in report.changes] == [
        ("tool-declared", "ListMcpResourcesTool"),
        ("tool-declared", "ReadMcpResourceDirTool"),
        ("tool-declared", "ReadMcpResourceTool"),
        ("tool-declared", "RefreshMcpTools"),
    ]
    back = compare(load_pin("claude-code@2.1.331"), load_pin("claude-code@2.1.330"))
    assert {c.kind for c in back.changes} == {"tool-sent"}
    # a pin that marks nothing (no capture of 2.1.0) says nothing about what was sent
    older = compare(load_pin("claude-code@2.1.0"), load_pin("claude-code@2.1.330"))
    assert not {c.kind for c in older.changes} & {"tool-sent", "tool-declared"}
