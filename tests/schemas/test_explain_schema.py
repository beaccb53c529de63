"""``explain TOOL --schema``: before, after, and the rule behind each change."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bridge_rules.cli.app import main


def rules(tmp_path: Path, target: str) -> str:
    path = tmp_path / "r.yaml"
    path.write_text(f"bridge-rules: 1\nextends: default\nschemas: {{target: {target}}}\n")
    return str(path)


def test_text_shows_before_after_and_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["explain", "Read", "--schema", "-r", rules(tmp_path, "openai-strict")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("schema of Read (claude-code@")
    assert "target openai-strict [" in out.splitlines()[0]  # where `schemas:` was written
    assert "before:" in out
    assert "after:" in out
    assert "/properties/offset: optional: now nullable [require-all]" in out
    assert "restored to the shape above" in out


def test_json_lists_each_change_with_its_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    schema = tmp_path / "s.json"
    schema.write_text(
        json.dumps(
            {
                "oneOf": [
                    {"type": "object", "properties": {"a": {"type": "string"}}},
                    {"type": "object", "properties": {"b": {"type": "integer"}}},
                ]
            }
        )
    )
    argv = [
        "explain",
        "x",
        "--schema-file",
        str(schema),
        "-f",
        "json",
        "-r",
        rules(tmp_path, "anthropic"),
    ]
    assert main(argv) == 0
    view = json.loads(capsys.readouterr().out)
    assert view["target"] == "anthropic"
    assert [c["rule"] for c in view["changes"]] == ["flatten-root-union"]
    assert view["after"]["type"] == "object"


def test_a_tool_without_a_known_schema_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["explain", "nosuch", "--schema", "-r", rules(tmp_path, "gemini")]) == 2
    assert "--schema-file" in capsys.readouterr().err
