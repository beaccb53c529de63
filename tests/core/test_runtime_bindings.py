"""Bindings added while the program runs: checked as file bindings, applied to the next
request, traced with their origin, and independent of the order they arrive in."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import orjson
import pytest

import bridge_rules
from bridge_rules import RulesError
from bridge_rules.engine import Engine

ASK = {"local": "ask_user", "wire": "AskUserQuestion", "schema": "passthrough"}
SUB = {"local": "subagent", "wire": "Agent", "schema": "passthrough"}
WEB = {
    "local": "web_search",
    "wire": "WebSearch",
    "schema": "passthrough",
    "input": [{"rename": {"query": "q"}}],
}


@pytest.fixture(scope="module")
def base() -> Engine:
    return bridge_rules.load()


def _request(*names: str) -> bytes:
    return orjson.dumps(
        {
            "model": "claude-sonnet-4-5",
            "max_tokens": 10,
            "tools": [{"name": n, "input_schema": {"type": "object"}} for n in names],
            "messages": [
                {"role": "user", "content": "go"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "tool_use", "id": "t1", "name": "web_search", "input": {"q": "x"}}
                    ],
                },
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1"}]},
            ],
        }
    )


def _sent(engine: Engine) -> bytes:
    return engine.turn(_request("ask_user", "subagent", "web_search"), env={}, cache=False).body


def test_a_runtime_binding_serves_the_next_request_and_the_engine_it_came_from_is_unchanged(
    base: Engine,
) -> None:
    before = _sent(base)
    added = base.with_bindings([ASK], origin="ext")
    assert base.outbound_name("ask_user") == "mcp__pi__ask_user"
    assert added.outbound_name("ask_user") == "AskUserQuestion"
    assert _sent(base) == before
    tools = orjson.loads(_sent(added))["tools"]
    assert tools[0]["name"] == "AskUserQuestion"
    assert added.inbound_name("AskUserQuestion", ["ask_user"]) == "ask_user"


def test_a_runtime_binding_replaces_a_file_binding_of_the_same_tool(base: Engine) -> None:
    assert base.outbound_name("read") == "Read"
    mine = base.with_bindings([{"local": "read", "wire": "mcp__mine__read"}], origin="ext")
    assert mine.outbound_name("read") == "mcp__mine__read"


def _found(exc: pytest.ExceptionInfo[RulesError]) -> list[tuple[str, str]]:
    return [(d.code, d.message) for d in exc.value.diagnostics]


def _file_twin(tmp_path: Path, binding: dict[str, Any]) -> list[tuple[str, str, str]]:
    """What loading the same binding from a rule file reports (code, severity, message)."""
    path = tmp_path / "rules.yaml"
    path.write_text(
        "bridge-rules: 1\nextends: default\nbindings:\n  - "
        + orjson.dumps(binding).decode()
        + "\n",
        encoding="utf-8",
    )
    try:
        engine = bridge_rules.load(path)
    except RulesError as exc:
        return [(d.code, d.severity.value, d.message) for d in exc.diagnostics]
    return [(d.code, d.severity.value, d.message) for d in engine.diagnostics]


@pytest.mark.parametrize(
    "binding",
    [
        {"local": "ask_user", "wire": "AskUserQuestion", "shema": "passthrough"},
        {"local": "ask_user", "wire": "AskUserQuestion", "input": [{"rename": "no"}]},
        {"local": "ask_user", "wire": "Bad Name!"},
        {"local": "read", "wire": "Read", "schema": "canonical", "input": [{"drop": ["pages"]}]},
    ],
    ids=["unknown key", "bad operation", "bad wire name", "warning only"],
)
def test_runtime_bindings_get_the_diagnostics_a_file_binding_gets(
    base: Engine, tmp_path: Path, binding: dict[str, Any]
) -> None:
    expected = _file_twin(tmp_path, binding)
    assert expected, "each case reports something"
    try:
        found = base.with_bindings([binding], origin="ext").diagnostics
    except RulesError as exc:
        found = exc.diagnostics
    assert [(d.code, d.severity.value, d.message) for d in found] == expected
    assert all(d.span.file in ("<bindings:ext>", "rules/default.yaml") for d in found)


def test_explain_names_the_origin(base: Engine) -> None:
    explained = base.with_bindings([ASK], origin="my-extension").explain("ask_user")
    assert explained.wire == "AskUserQuestion"
    assert [s.span.file for s in explained.steps if s.matched] == ["<bindings:my-extension>"]
    assert "[<bindings:my-extension>:4:5]" in explained.sections["arguments"]["text"]


REGISTRATIONS: list[tuple[str, list[dict[str, Any]]]] = [
    ("a-ext", [ASK]),
    ("b-ext", [SUB, WEB]),
    ("c-ext", [{"local": "write", "wire": "mcp__c__write"}]),
]


def _summary(engine: Engine) -> tuple[Any, ...]:
    return (
        _sent(engine),
        [(d.code, str(d.span), d.message) for d in engine.diagnostics],
        engine.binding_origins,
        [engine.explain(n).wire for n in ("ask_user", "subagent", "web_search", "write")],
    )


def test_the_order_bindings_arrive_in_does_not_change_the_result(base: Engine) -> None:
    results = set()
    for order in itertools.permutations(REGISTRATIONS):
        engine = base
        for origin, bindings in order:
            engine = engine.with_bindings(bindings, origin=origin)
        results.add(orjson.dumps(_summary(engine), default=str))
    assert len(results) == 1


def test_an_origin_added_again_replaces_its_bindings_and_an_empty_list_removes_them(
    base: Engine,
) -> None:
    engine = base.with_bindings([ASK, SUB], origin="ext").with_bindings([ASK], origin="ext")
    assert engine.outbound_name("subagent") == "mcp__pi__subagent"
    assert engine.outbound_name("ask_user") == "AskUserQuestion"
    gone = engine.with_bindings([], origin="ext")
    assert gone.binding_origins == []
    assert gone.outbound_name("ask_user") == "mcp__pi__ask_user"


def test_one_tool_bound_by_two_origins_is_refused_whatever_the_order(base: Engine) -> None:
    other = [{"local": "ask_user", "wire": "mcp__x__ask"}]
    for first, second in (("a", "b"), ("b", "a")):
        with pytest.raises(RulesError) as exc:
            base.with_bindings([ASK], origin=first).with_bindings(other, origin=second)
        assert [d.code for d in exc.value.diagnostics] == ["BR409"]
        assert str(exc.value.diagnostics[0].span) == "<bindings:b>:4:5"


def test_a_bindings_directory_is_one_origin_per_file_and_reading_it_again_replaces_it(
    base: Engine, tmp_path: Path
) -> None:
    (tmp_path / "ask.yaml").write_text(
        "bridge-rules: 1\nbindings:\n  - {local: ask_user, wire: AskUserQuestion}\n"
    )
    (tmp_path / "sub.yaml").write_text(
        "bridge-rules: 1\nbindings:\n  - {local: subagent, wire: Agent}\n"
    )
    engine = base.with_bindings(tmp_path)
    assert engine.binding_origins == [str(tmp_path / "ask.yaml"), str(tmp_path / "sub.yaml")]
    assert engine.explain("subagent").steps[0].span.file == str(tmp_path / "sub.yaml")
    (tmp_path / "sub.yaml").unlink()
    again = engine.with_bindings(tmp_path)
    assert again.binding_origins == [str(tmp_path / "ask.yaml")]
    assert again.outbound_name("subagent") == "mcp__pi__subagent"


def test_a_bindings_file_holds_only_bindings(base: Engine, tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text(
        "bridge-rules: 1\ngate: {api: [anthropic-messages]}\n"
        "bindings:\n  - {local: ask_user, wire: AskUserQuestion}\n"
    )
    with pytest.raises(RulesError) as exc:
        base.with_bindings(path)
    assert [(d.code, str(d.span)) for d in exc.value.diagnostics] == [("BR410", f"{path}:2:1")]


def test_the_seal_key_and_environment_carry_over() -> None:
    engine = bridge_rules.load("pi-tool-guard", seal_key=b"k" * 32)
    added = engine.with_bindings([ASK], origin="ext")
    assert added.runtime.sealer is engine.runtime.sealer
    assert added.runtime.stripping_tools == engine.runtime.stripping_tools


def test_bindings_that_are_not_a_list_are_a_type_error(base: Engine) -> None:
    with pytest.raises(TypeError):
        base.with_bindings(ASK, origin="ext")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        base.with_bindings("bindings.yaml")  # type: ignore[arg-type]
