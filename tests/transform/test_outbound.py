"""Outbound request rewriting: what each part of a request becomes, and what is left alone."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from tests.transform.conftest import OPEN_ENV, write_rules

from bridge_rules import calls
from bridge_rules.engine import Engine
from bridge_rules.schemas.convert import Conversion

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}}


def tool(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "description": f"{name} tool", "input_schema": SCHEMA, **extra}


def request(**fields: Any) -> dict[str, Any]:
    return {"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": [], **fields}


def test_tools_renamed_and_recorded(eng: Engine) -> None:
    payload = request(tools=[tool("read"), tool("ls"), tool("mcp__exa__web_search")])
    result = eng.outbound(payload, env=OPEN_ENV)
    names = [t["name"] for t in result.payload["tools"]]
    assert names == [eng.outbound_name("read"), "mcp__pi__ls", "mcp__exa__web_search"]
    assert result.renames["ls"] == "mcp__pi__ls"
    assert "mcp__exa__web_search" not in result.renames
    assert result.registered == ["read", "ls", "mcp__exa__web_search"]
    assert result.gate_open


def test_input_is_never_mutated(eng: Engine, root: Path) -> None:
    import orjson

    capture = root / "tests" / "golden" / "captures" / "pi-alltools-parallel-turn2.json"
    payload = orjson.loads(capture.read_bytes())
    before = copy.deepcopy(payload)
    result = eng.outbound(payload, env=OPEN_ENV)
    assert payload == before
    assert result.payload is not payload
    assert result.payload["messages"] is not payload["messages"]


@pytest.mark.parametrize(
    ("kind", "name"),
    [
        ("web_search_20250305", "web_search"),
        ("text_editor_20250728", "str_replace_based_edit_tool"),
        ("bash_20250124", "bash"),
        ("computer_20250124", "computer"),
        ("memory_20250818", "memory"),
    ],
)
def test_typed_server_tools_are_never_renamed(eng: Engine, kind: str, name: str) -> None:
    typed = {"type": kind, "name": name}
    history = {"type": "tool_use", "id": "toolu_1", "name": name, "input": {}}
    payload = request(
        tools=[typed, tool("ls")],
        tool_choice={"type": "tool", "name": name},
        messages=[{"role": "assistant", "content": [history]}],
    )
    out = eng.outbound(payload, env=OPEN_ENV).payload
    assert out["tools"][0] is typed
    assert out["tool_choice"] == {"type": "tool", "name": name}
    assert out["messages"][0]["content"][0]["name"] == name


def test_custom_type_is_an_ordinary_tool(eng: Engine) -> None:
    out = eng.outbound(request(tools=[tool("ls", type="custom")]), env=OPEN_ENV).payload
    assert out["tools"][0]["name"] == "mcp__pi__ls"


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ({"type": "auto"}, {"type": "auto"}),
        (
            {"type": "any", "disable_parallel_tool_use": True},
            {"type": "any", "disable_parallel_tool_use": True},
        ),
        ({"type": "none"}, {"type": "none"}),
        ({"type": "tool", "name": "ls"}, {"type": "tool", "name": "mcp__pi__ls"}),
        (
            {"type": "tool", "name": "ls", "disable_parallel_tool_use": True},
            {"type": "tool", "name": "mcp__pi__ls", "disable_parallel_tool_use": True},
        ),
        ({"type": "tool"}, {"type": "tool"}),
        ("auto", "auto"),
    ],
)
def test_tool_choice_shapes(eng: Engine, choice: Any, expected: Any) -> None:
    out = eng.outbound(request(tools=[tool("ls")], tool_choice=choice), env=OPEN_ENV).payload
    assert out["tool_choice"] == expected


def test_history_names_and_tool_result_names(eng: Engine) -> None:
    messages = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "listing"},
                {"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {"path": "."}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "name": "ls", "content": "a"}
            ],
        },
    ]
    out = eng.outbound(request(tools=[tool("ls")], messages=messages), env=OPEN_ENV).payload
    assert out["messages"][0] is messages[0]
    assert out["messages"][1]["content"][0] is messages[1]["content"][0]
    assert out["messages"][1]["content"][1]["name"] == "mcp__pi__ls"
    assert out["messages"][1]["content"][1]["input"] == {"path": "."}
    assert out["messages"][2]["content"][0]["name"] == "mcp__pi__ls"
    assert out["messages"][2]["content"][0]["tool_use_id"] == "toolu_1"


def test_unknown_fields_pass_through(eng: Engine) -> None:
    payload = request(
        tools=[tool("ls", eager_input_streaming=True, cache_control={"type": "ephemeral"})],
        thinking={"type": "enabled", "budget_tokens": 2048},
        metadata={"user_id": "u"},
        context_management={"edits": []},
    )
    out = eng.outbound(payload, env=OPEN_ENV).payload
    assert out["tools"][0]["eager_input_streaming"] is True
    assert out["tools"][0]["cache_control"] == {"type": "ephemeral"}
    for key in ("thinking", "metadata", "context_management"):
        assert out[key] is payload[key]


@pytest.mark.parametrize(
    ("model", "env", "open_"),
    [
        ("claude-sonnet-4-5", {}, True),
        ("gpt-5", {}, False),
        ("gpt-5", {"PI_ANTHROPIC_MESSAGES_FORCE_CANONICAL": "1"}, True),
        ("claude-sonnet-4-5", {"PI_ANTHROPIC_MESSAGES_DISABLE_CANONICAL": "1"}, False),
    ],
)
def test_gate_decides_first(eng: Engine, model: str, env: dict[str, str], open_: bool) -> None:
    payload = request(model=model, tools=[tool("ls")])
    result = eng.outbound(payload, env=env)
    assert result.gate_open is open_
    if not open_:
        assert result.payload == payload
        assert result.renames == {}
    assert result.registered == ["ls"]


def test_model_argument_overrides_the_payload(eng: Engine) -> None:
    payload = request(model="gpt-5", tools=[tool("ls")])
    assert eng.outbound(payload, model="claude-opus-4", env={}).gate_open
    assert not eng.outbound(request(tools=[tool("ls")]), model="gpt-5", env={}).gate_open


@pytest.mark.parametrize(
    "payload",
    [
        None,
        [],
        "text",
        3,
        {"tools": "x"},
        {"tools": [1, None, {"name": 5}]},
        {"messages": [1, {"content": "x"}, {"content": [None, {"type": "tool_use"}]}]},
        {"system": 3},
        {"tool_choice": None},
    ],
)
def test_malformed_shapes_pass_through(eng: Engine, payload: Any) -> None:
    if isinstance(payload, dict):
        payload = {"model": "claude-x", **payload}
    result = eng.outbound(payload, env=OPEN_ENV)
    assert result.payload == payload


def test_system_text_rules_in_string_and_block_form(tmp_path: Path) -> None:
    rules = write_rules(
        tmp_path,
        "text:\n  system:\n    - {find: 'pi itself', replace: 'the cli itself'}\n"
        "    - {find: '\\bpi (packages|\\.md files)', replace: 'cli \\1', regex: true}\n",
    )
    text = "about pi itself, Pi itself, pi packages and pi .md files"
    want = "about the cli itself, Pi itself, cli packages and cli .md files"
    assert rules.outbound(request(system=text), env=OPEN_ENV).payload["system"] == want
    blocks = [
        {"type": "text", "text": text, "cache_control": {"type": "ephemeral"}},
        {"type": "image", "source": {"type": "base64", "data": "pi itself"}},
    ]
    out = rules.outbound(request(system=blocks), env=OPEN_ENV).payload["system"]
    assert out[0] == {"type": "text", "text": want, "cache_control": {"type": "ephemeral"}}
    assert out[1] is blocks[1]


def test_capability_filters_drop_write_and_exec(tmp_path: Path) -> None:
    rules = write_rules(
        tmp_path,
        "filters:\n  capabilities: {write: [write, edit], exec: [Bash]}\n  deny: [write, exec]\n",
    )
    payload = request(
        tools=[tool("read"), tool("write"), tool("edit"), tool("bash"), tool("ls")],
        tool_choice={"type": "tool", "name": "edit"},
    )
    result = rules.outbound(payload, env=OPEN_ENV)
    assert [t["name"] for t in result.payload["tools"]] == [
        rules.outbound_name("read"),
        "mcp__pi__ls",
    ]
    assert result.dropped == ["write", "edit", "bash"]
    assert result.registered == ["read", "ls"]
    assert "tool_choice" not in result.payload  # it forced a tool that is no longer sent


def test_dedup_of_bridged_tools(tmp_path: Path) -> None:
    rules = write_rules(tmp_path, "filters:\n  dedup_bridged: true\n")
    payload = request(
        tools=[
            tool("knowledge_search"),
            tool("mcp__orion__knowledge_search"),
            tool("mcp__orion__canvas_draw"),
        ]
    )
    result = rules.outbound(payload, env=OPEN_ENV)
    assert [t["name"] for t in result.payload["tools"]] == [
        "mcp__pi__knowledge_search",
        "mcp__orion__canvas_draw",
    ]
    assert result.dropped == ["mcp__orion__knowledge_search"]


def test_no_filters_by_default(eng: Engine) -> None:
    payload = request(tools=[tool("knowledge_search"), tool("mcp__orion__knowledge_search")])
    assert len(eng.outbound(payload, env=OPEN_ENV).payload["tools"]) == 2


def test_schema_goes_through_the_binding_seam(eng: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []

    real = calls.wire_conversion

    def wire_conversion(rt: Any, name: str, schema: Any) -> Any:
        seen.append(name)
        if name == "read":
            wire = {"type": "object", "properties": {"file_path": {"type": "string"}}}
            return None, Conversion(original=schema, schema=wire)
        return real(rt, name, schema)

    monkeypatch.setattr("bridge_rules.transform.outbound_tools.wire_conversion", wire_conversion)
    out = eng.outbound(request(tools=[tool("read"), tool("ls")]), env=OPEN_ENV).payload
    assert seen == ["read", "ls"]
    assert out["tools"][0]["input_schema"]["properties"] == {"file_path": {"type": "string"}}
    assert out["tools"][1]["input_schema"] is SCHEMA
