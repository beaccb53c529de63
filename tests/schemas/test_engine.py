"""`schemas:` in rule files, end to end through the engine: out, back, streamed, replayed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from tests.schemas.checker import problems
from tests.transform.conftest import tool_calls

import bridge_rules
from bridge_rules.engine import Engine

SEARCH = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 2},
        "limit": {"type": "integer"},
        "filters": {"type": "object", "additionalProperties": {"type": "string"}},
    },
    "required": ["query"],
    "additionalProperties": False,
}
TOOLS = [{"name": "search", "description": "Search.", "input_schema": SEARCH}]


def engine(tmp_path: Path, *bodies: str) -> Engine:
    paths = []
    for i, body in enumerate(bodies):
        path = tmp_path / f"r{i}.yaml"
        path.write_text("bridge-rules: 1\n" + body, encoding="utf-8")
        paths.append(str(path))
    return bridge_rules.load(paths)


def request(messages: list[Any] | None = None) -> dict[str, Any]:
    return {"model": "claude-x", "max_tokens": 10, "tools": TOOLS, "messages": messages or []}


def sent_schema(eng: Engine) -> Any:
    return eng.outbound(request(), env={}).payload["tools"][0]["input_schema"]


def shapes_of(eng: Engine, payload: dict[str, Any] | None = None) -> Any:
    """The request's own schema conversions: what its answer and its history cross."""
    return eng.outbound(payload or request(), env={}).shapes


def test_openai_strict_tools_go_out_strict_and_calls_come_back_as_the_agent_wrote(
    tmp_path: Path,
) -> None:
    eng = engine(tmp_path, "schemas: {target: openai-strict}\n")
    schema = sent_schema(eng)
    assert problems("openai-strict", schema) == []
    assert schema["required"] == ["query", "limit", "filters"]
    assert schema["properties"]["query"] == {
        "type": "string",
        "pattern": "^[\\s\\S]{2,}",
        "description": "At least 2 characters.",
    }
    model_call = {"query": "x y", "limit": None, "filters": '{"lang":"py"}'}
    message = {"content": [{"type": "tool_use", "id": "t1", "name": "search", "input": model_call}]}
    shapes = shapes_of(eng)
    back = eng.inbound(message, registered=["search"], shapes=shapes)["content"][0]["input"]
    assert back == {"query": "x y", "filters": {"lang": "py"}}
    # without the request's conversions (another request's answer) nothing is restored
    assert eng.inbound(message, registered=["search"])["content"][0]["input"] == model_call


def test_history_replays_the_agents_call_forward_exactly(tmp_path: Path) -> None:
    eng = engine(tmp_path, "schemas: {target: openai-strict}\n")
    sent = {"query": "x y", "limit": None, "filters": '{"lang":"py"}'}
    local = eng.inbound_call("search", sent, ["search"], shapes_of(eng)).arguments
    history = [
        {"role": "user", "content": "find"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "search", "input": local}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}],
        },
    ]
    out = eng.outbound(request(history), env={}).payload
    assert out["messages"][1]["content"][0]["input"] == sent


def test_a_stream_is_restored_too(tmp_path: Path) -> None:
    eng = engine(tmp_path, "schemas: {target: openai-strict}\n")
    shapes = shapes_of(eng)
    events = [
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "t1", "name": "search", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {
                "type": "input_json_delta",
                "partial_json": '{"query": "ab", "limit": null, "filters": null}',
            },
        },
        {"type": "content_block_stop", "index": 0},
    ]
    stream = b"".join(b"data: " + orjson.dumps(e) + b"\n\n" for e in events)
    out = b"".join(eng.inbound_stream([stream], registered=["search"], shapes=shapes))
    assert tool_calls(out) == [("search", {"query": "ab"})]


def test_gemini_enum_of_numbers_is_sent_as_strings_and_mapped_back(tmp_path: Path) -> None:
    eng = engine(tmp_path, "schemas: {target: gemini}\n")
    schema = {"type": "object", "properties": {"level": {"type": "integer", "enum": [1, 2]}}}
    payload = {**request(), "tools": [{"name": "set", "input_schema": schema}]}
    out = eng.outbound(payload, env={})
    wire = out.payload["tools"][0]["input_schema"]
    assert wire["properties"]["level"] == {"type": "string", "enum": ["1", "2"]}
    assert eng.inbound_call("set", {"level": "2"}, ["set"], out.shapes).arguments == {"level": 2}


def test_the_default_target_leaves_accepted_schemas_alone(tmp_path: Path) -> None:
    eng = engine(tmp_path, "")
    assert sent_schema(eng) == SEARCH
    assert eng.inbound_call("search", {"query": "q"}, ["search"]).arguments == {"query": "q"}


def test_the_default_target_flattens_a_root_union_and_keeps_the_chosen_variant(
    tmp_path: Path,
) -> None:
    eng = engine(tmp_path, "")
    union = {
        "oneOf": [
            {
                "type": "object",
                "properties": {"op": {"const": "get"}, "key": {"type": "string"}},
                "required": ["op", "key"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {"op": {"const": "list"}, "prefix": {"type": "string"}},
                "required": ["op"],
                "additionalProperties": False,
            },
        ]
    }
    payload = {**request(), "tools": [{"name": "kv", "input_schema": union}]}
    out = eng.outbound(payload, env={})
    wire = out.payload["tools"][0]["input_schema"]
    assert problems("anthropic", wire) == []
    assert wire["properties"]["op"] == {"enum": ["get", "list"], "type": "string"}
    call = {"op": "list", "prefix": "a", "key": "stray"}
    back = eng.inbound_call("kv", call, ["kv"], out.shapes)
    assert back.arguments == {"op": "list", "prefix": "a"}


def test_a_later_file_changes_only_the_target(tmp_path: Path) -> None:
    eng = engine(
        tmp_path,
        "schemas: {target: openai-strict, operations: [const-to-enum]}\n",
        "schemas: {target: gemini}\n",
    )
    assert eng.runtime.rules.schemas.target == "gemini"
    assert "const-to-enum" in eng.runtime.rules.schemas.operations


def test_operations_without_a_target_run_alone(tmp_path: Path) -> None:
    eng = engine(tmp_path, "schemas: {operations: [inline-refs]}\n")
    assert eng.runtime.rules.schemas.operations == ("inline-refs",)
    schema = {
        "type": "object",
        "properties": {"p": {"$ref": "#/$defs/p"}},
        "$defs": {"p": {"type": "string"}},
    }
    payload = {**request(), "tools": [{"name": "t", "input_schema": schema}]}
    wire = eng.outbound(payload, env={}).payload["tools"][0]["input_schema"]
    assert wire == {"type": "object", "properties": {"p": {"type": "string"}}}


def test_an_unknown_operation_is_a_located_error(tmp_path: Path) -> None:
    with pytest.raises(bridge_rules.RulesError) as caught:
        engine(tmp_path, "schemas: {operations: [inline-ref]}\n")
    assert "BR1" in str(caught.value)


def test_gemini_name_rules_join_the_wire_names_guard(tmp_path: Path) -> None:
    eng = engine(tmp_path, "schemas: {target: gemini}\n")
    payload = {**request(), "tools": [{"name": "1st_tool", "input_schema": {"type": "object"}}]}
    out = eng.outbound(payload, env={})
    assert out.rejected is not None
    assert "gemini" in out.rejected
    assert engine(tmp_path, "").outbound(payload, env={}).rejected is None


def test_a_remembered_tools_array_brings_its_own_conversion_back(tmp_path: Path) -> None:
    """Two tools arrays with one tool name, alternating: calls come back through the schema
    of the request they answer, even when the outbound cache remembers the tools; and two
    requests in flight at once each keep their own (nothing is kept between requests)."""
    eng = engine(tmp_path, "schemas: {target: openai-strict}\n")
    required = {**SEARCH, "required": ["query", "limit", "filters"]}
    first = orjson.dumps(request())
    second = orjson.dumps({**request(), "tools": [{**TOOLS[0], "input_schema": required}]})
    sent = {"query": "q", "limit": None, "filters": None}
    turns = [eng.turn(body, env={}) for body in (first, second, first, second)]
    answer = {"content": [{"type": "tool_use", "id": "t", "name": "search", "input": sent}]}
    backs = [t.message(answer)["content"][0]["input"] for t in reversed(turns)]
    assert backs == [sent, {"query": "q"}, sent, {"query": "q"}]
    assert turns[2].outcome.tools_reused


def test_the_proxys_turn_restores_the_answer(tmp_path: Path) -> None:
    eng = engine(tmp_path, "schemas: {target: gemini}\n")
    schema = {"type": "object", "properties": {"level": {"type": "integer", "enum": [1, 2]}}}
    body = orjson.dumps({**request(), "tools": [{"name": "set", "input_schema": schema}]})
    turn = eng.turn(body, env={})
    sent = orjson.loads(turn.body)["tools"][0]["input_schema"]
    assert sent["properties"]["level"] == {"type": "string", "enum": ["1", "2"]}
    answer = {"content": [{"type": "tool_use", "id": "t", "name": "set", "input": {"level": "1"}}]}
    assert turn.message(answer)["content"][0]["input"] == {"level": 1}
    events = [
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {**answer["content"][0], "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"level": "2"}'},
        },
        {"type": "content_block_stop", "index": 0},
    ]
    stream = b"".join(b"data: " + orjson.dumps(e) + b"\n\n" for e in events)
    assert tool_calls(b"".join(turn.stream([stream]))) == [("set", {"level": 2})]
