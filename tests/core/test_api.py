"""The stable Python API, exactly as the README documents it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import bridge_rules


def test_readme_api_calls() -> None:
    eng = bridge_rules.load()
    assert bridge_rules.load("pi-anthropic-messages").outbound_name("edit") == "mcp__pi__edit"
    assert eng.gate({"api": "anthropic-messages", "id": "claude-sonnet-4-5"}, env={}) is True
    assert eng.outbound_name("read") == "Read"
    assert eng.inbound_name("Read_ide", registered=["read", "bash"]) == "read"
    assert eng.inbound_name("Nope_ide", registered=["read", "bash"]) is None
    trace = eng.explain("read", registered=None).to_dict()
    json.dumps(trace)  # JSON-able
    assert trace["outbound"]["wire"] == "Read"
    assert trace["outbound"]["decided_by"]["kind"] == "bindings"  # default binding read <-> Read
    assert trace["inbound"]["round_trip"] is True


def test_load_accepts_a_path_a_string_path_and_a_list(tmp_path: Path) -> None:
    rules = tmp_path / "r.yaml"
    rules.write_text(
        "bridge-rules: 1\nnames:\n  - {kind: prefix, value: mcp__t__}\n", encoding="utf-8"
    )
    for ref in (rules, str(rules), [rules], [str(rules)]):
        assert bridge_rules.load(ref).outbound_name("x") == "mcp__t__x"


def test_bad_rules_raise_one_documented_exception_with_all_diagnostics(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("bridge-rules: 1\nnmes: []\ngate: {api: 3}\n", encoding="utf-8")
    with pytest.raises(bridge_rules.RulesError) as info:
        bridge_rules.load(bad)
    codes = sorted(d.code for d in info.value.diagnostics)
    assert codes == ["BR102", "BR103"]
    assert all(isinstance(d, bridge_rules.Diagnostic) for d in info.value.diagnostics)


def test_env_defaults_to_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    eng = bridge_rules.load()
    model = {"api": "anthropic-messages", "id": "claude-sonnet-4-5"}
    monkeypatch.setenv("PI_ANTHROPIC_MESSAGES_DISABLE_CANONICAL", "1")
    assert eng.gate(model) is False
    monkeypatch.delenv("PI_ANTHROPIC_MESSAGES_DISABLE_CANONICAL")
    assert eng.gate(model) is True


def test_collisions_are_reported_never_silently_accepted(tmp_path: Path) -> None:
    rules = tmp_path / "c.yaml"
    rules.write_text(
        "bridge-rules: 1\nlocal_tools: [find, ls]\n"
        "names:\n  - kind: aliases\n    map: {find: Glob, ls: Glob}\n",
        encoding="utf-8",
    )
    eng = bridge_rules.load(rules)
    (diag,) = [d for d in eng.diagnostics if d.code == "BR203"]
    assert "'find', 'ls'" in diag.message
    assert "Glob" in diag.message
    assert diag.span.line == 5
    (collision,) = eng.collisions(["find", "ls"])
    assert collision.winner == "find"
    assert eng.inbound_name("Glob", registered=["find", "ls"]) == "find"


def test_unregistered_names_do_not_map_back() -> None:
    eng = bridge_rules.load()
    assert eng.inbound_name("mcp__pi__ask_user", registered=["ask_user"]) == "ask_user"
    assert eng.inbound_name("mcp__pi__ask_user", registered=["read"]) is None


def test_explain_reports_invalid_wire_names(tmp_path: Path) -> None:
    rules = tmp_path / "long.yaml"
    rules.write_text(
        "bridge-rules: 1\nnames:\n  - {kind: prefix, value: mcp__a_very_long_server_name__}\n",
        encoding="utf-8",
    )
    trace = bridge_rules.load(rules).explain("x" * 40 + ".tool").to_dict()
    assert trace["wire_name"]["valid"] is False
    problems = " ".join(trace["wire_name"]["problems"])
    assert "at most 64" in problems
    assert "'.'" in problems
