"""`bridge-rules explain --model ID`: every model-level decision, its rule and its place."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.core.test_cli_explain import run

FIELDS = [
    "tool_choice.forced",
    "thinking.foreign",
    "thinking.unknown",
    "thinking.disabled",
    "system_in_messages",
]


def test_every_decision_for_a_packaged_model_names_the_profile_line() -> None:
    proc = run("explain", "--model", "claude-sonnet-5-5")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "model claude-sonnet-5-5"
    assert [line.split(":")[0].strip() for line in lines[1:]] == FIELDS
    assert "tool_choice.forced: auto  <- models['claude-sonnet-5-5'] at " in proc.stdout
    places = re.findall(r"rules/profiles/models\.yaml:(\d+):\d+", proc.stdout)
    assert len(places) == len(FIELDS)
    text = (Path(__file__).resolve().parents[2] / "rules/profiles/models.yaml").read_text()
    rows = text.splitlines()
    for field, line in zip(FIELDS, places, strict=True):
        assert field.split(".")[-1] in rows[int(line) - 1]  # the place is where it is written


def test_an_overlay_wins_and_is_the_place_shown(tmp_path: Path) -> None:
    rules = tmp_path / "mine.yaml"
    rules.write_text(
        "bridge-rules: 1\nextends: default\nmodels:\n  claude-*-5-5:\n"
        "    thinking: {unknown: strip}\n",
        encoding="utf-8",
    )
    proc = run("explain", "--model", "claude-opus-5-5", "--rules", str(rules), "-f", "json")
    assert proc.returncode == 0, proc.stderr
    rows = {row["field"]: row for row in json.loads(proc.stdout)["decisions"]}
    assert rows["thinking.unknown"]["value"] == "strip"
    assert rows["thinking.unknown"]["glob"] == "claude-*-5-5"
    assert rows["thinking.unknown"]["where"].endswith("mine.yaml:5:25")  # the value `strip`
    assert rows["thinking.foreign"]["where"].startswith("rules/profiles/models.yaml:")


def test_a_model_no_entry_names_shows_the_defaults() -> None:
    proc = run("explain", "--model", "gpt-5")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("default (no models: entry sets it)") == len(FIELDS)


def test_neither_tool_nor_model_is_a_usage_error() -> None:
    proc = run("explain")
    assert proc.returncode == 2
    assert "--model" in proc.stderr
