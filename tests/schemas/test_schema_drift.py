"""Drift between two pins that differ in every way a schema can, and `--exit-code` for CI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bridge_rules.cli.app import main
from bridge_rules.drift import compare
from bridge_rules.pins import load_file

HERE = Path(__file__).parent / "drift"
OLD, NEW = load_file(HERE / "toolkit@1.0.0.json"), load_file(HERE / "toolkit@1.1.0.json")
PINS = ["--pins", str(HERE)]


def test_every_kind_of_change_is_reported() -> None:
    got = {(c.kind, c.detail) for c in compare(OLD, NEW).changes}
    assert got == {
        ("tool-removed", "Gone removed"),
        ("tool-added", "Fresh added"),
        ("field-added", "Search.glob added"),
        ("field-removed", "Search.legacy removed"),
        ("field-removed", "Search.scope.path removed"),
        ("field-added", "Search.scope[].path added"),
        ("field-type", "Search.limit: type integer -> string"),
        ("field-required", "Search.limit is required now"),
        ("field-enum", 'Search.mode: enum +"deep" -"full"'),
        ("field-structure", "Search.scope is an array now (was object)"),
    }


def rules(tmp_path: Path, body: str) -> str:
    path = tmp_path / "r.yaml"
    path.write_text("bridge-rules: 1\n" + body, encoding="utf-8")
    return str(path)


def drift(tmp_path: Path, body: str, *extra: str) -> int:
    argv = [*PINS, "drift", "--from", "toolkit@1.0.0", "--to", "toolkit@1.1.0"]
    return main([*argv, "-r", rules(tmp_path, body), *extra])


def test_exit_code_when_a_bound_tool_changes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = "bindings:\n  - local: find\n    wire: Search\n    input:\n      - rename: {q: query}\n"
    assert drift(tmp_path, body, "--exit-code") == 1
    out = capsys.readouterr().out
    assert "Search.limit: type integer -> string" in out
    assert "touches binding 'find'" in out
    assert drift(tmp_path, body) == 0  # without --exit-code the report is informational


def test_exit_code_when_a_passed_through_tool_changes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = "local_tools: [search]\nnames:\n  - {kind: aliases, map: {search: Search}}\n"
    assert drift(tmp_path, body, "--exit-code", "-f", "json") == 1
    doc = json.loads(capsys.readouterr().out)
    enum = next(c for c in doc["changes"] if c["kind"] == "field-enum")
    assert any("search" in t["rule"] for t in enum["touches"])


def test_no_exit_code_when_only_unused_tools_change(tmp_path: Path) -> None:
    body = "local_tools: [fetch]\nnames:\n  - {kind: aliases, map: {fetch: Fetch}}\n"
    assert drift(tmp_path, body, "--exit-code") == 0


def test_pin_diff_reports_the_same_changes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*PINS, "pin", "diff", "toolkit@1.0.0", "toolkit@1.1.0"]) == 0
    out = capsys.readouterr().out
    assert "Search.scope is an array now (was object)" in out
    assert 'Search.mode: enum +"deep" -"full"' in out
