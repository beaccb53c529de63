"""What repair records stays in the engine; a stripped pipeline is applied to the result.

The pi-tool-guard profile both ways: the agent never receives `_piToolGuard*` keys (message
and stream), history never sends them upstream, and the next request's `tool_result` gets
the removed extractors applied while the call's id is remembered.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from ruamel.yaml import YAML
from tests.transform.conftest import tool_calls

import bridge_rules
from bridge_rules.engine import Engine
from bridge_rules.repair.extract import run_pipeline
from bridge_rules.transform.results import CallMemory

HERE = Path(__file__).parent
EXTRACT_CASES: list[dict[str, Any]] = YAML(typ="safe").load(
    (HERE / "data" / "extractors.yaml").read_text(encoding="utf-8")
)
COMMAND = "npm test 2>&1 | grep FAIL | head -n 2"
OUTPUT = "ok a\nFAIL b\nok c\nFAIL d\nFAIL e\n"


@pytest.mark.parametrize(
    "case", EXTRACT_CASES, ids=[" | ".join(c["pipeline"]) for c in EXTRACT_CASES]
)
def test_extractors(case: dict[str, Any]) -> None:
    assert run_pipeline(case["pipeline"], case["text"]) == case["out"]


@pytest.fixture
def guard() -> Engine:
    return bridge_rules.load("pi-tool-guard")  # a fresh engine: a fresh memory


def use(call_id: str, command: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": call_id,
        "name": "bash",
        "input": {"command": command, **extra},
    }


def history(call: dict[str, Any], result: Any) -> dict[str, Any]:
    return {
        "model": "m",
        "tools": [{"name": "bash", "input_schema": {"type": "object"}}],
        "messages": [
            {"role": "user", "content": "run the tests"},
            {"role": "assistant", "content": [call]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": call["id"], "content": result}],
            },
        ],
    }


def test_agent_gets_no_internal_keys(guard: Engine) -> None:
    out = guard.inbound({"content": [use("toolu_1", COMMAND, timeout=5)]})
    assert out["content"][0]["input"] == {"command": "npm test 2>&1", "timeout": 5}


def test_stream_gives_no_internal_keys(guard: Engine) -> None:
    start = {
        "type": "content_block_start",
        "index": 0,
        "content_block": {**use("toolu_1", ""), "input": {}},
    }
    delta = {
        "type": "content_block_delta",
        "index": 0,
        "delta": {
            "type": "input_json_delta",
            "partial_json": orjson.dumps({"command": COMMAND}).decode(),
        },
    }
    stream = b"".join(
        b"data: " + orjson.dumps(d) + b"\n\n"
        for d in (start, delta, {"type": "content_block_stop", "index": 0})
    )
    out = b"".join(guard.inbound_stream([stream]))
    assert b"_piToolGuard" not in out
    assert tool_calls(out) == [("bash", {"command": "npm test 2>&1"})]
    assert guard.memory is not None
    assert guard.memory.recall("toolu_1") is not None


@pytest.mark.parametrize("result", [OUTPUT, [{"type": "text", "text": OUTPUT}]])
def test_next_request_applies_the_pipeline_to_the_result(guard: Engine, result: Any) -> None:
    guard.inbound({"content": [use("toolu_1", COMMAND)]})
    request = history(use("toolu_1", "npm test 2>&1"), result)
    before = orjson.dumps(request)
    sent = guard.outbound(request).payload
    assert orjson.dumps(request) == before  # the input is never mutated
    call, answer = sent["messages"][1]["content"][0], sent["messages"][2]["content"][0]
    assert call["input"] == {"command": COMMAND}  # the model sees the call it wrote
    filtered = answer["content"] if isinstance(result, str) else answer["content"][0]["text"]
    assert filtered == "FAIL b\nFAIL d\n"
    assert guard.outbound(request).payload == sent  # every later request: the same history


def test_forgotten_ids_pass_unchanged(guard: Engine) -> None:
    request = history(use("toolu_9", "npm test 2>&1"), OUTPUT)
    assert guard.outbound(request).payload["messages"] == request["messages"]


def test_a_stage_it_cannot_reproduce_runs_in_the_agent(guard: Engine) -> None:
    command = "cat log | awk '{print $2}'"
    out = guard.inbound({"content": [use("toolu_1", command)]})
    assert out["content"][0]["input"] == {"command": command}
    request = history(use("toolu_1", command), OUTPUT)
    sent = guard.outbound(request).payload
    assert sent["messages"][1:] == request["messages"][1:]


def test_history_never_sends_internal_keys(guard: Engine) -> None:
    leaked = use("toolu_2", "ls", _piToolGuardOriginalCommand="ls | head", _piToolGuardRemoved=True)
    sent = guard.outbound(history(leaked, "a")).payload
    assert sent["messages"][1]["content"][0]["input"] == {"command": "ls"}


def test_memory_is_bounded() -> None:
    guard = bridge_rules.load("pi-tool-guard")
    call = guard.inbound_call("bash", {"command": "ls | head -1"})
    memory = CallMemory(size=2)
    for n in range(5):
        memory.remember(f"toolu_{n}", call)
    assert len(memory) == 2
    assert memory.recall("toolu_0") is None
    assert memory.recall("toolu_4") is not None


def test_rules_without_strips_keep_no_memory(eng: Engine) -> None:
    assert eng.memory is None


def test_a_recovered_call_is_remembered_too(tmp_path: Path) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text(
        "bridge-rules: 1\nextends: pi-tool-guard\ntext:\n  recover_tool_calls: true\n",
        encoding="utf-8",
    )
    guard = bridge_rules.load(str(rules))
    text = '<tool_call>{"name": "bash", "arguments": {"command": "ls | head -n 1"}}</tool_call>'
    out = guard.inbound({"id": "msg_r", "content": [{"type": "text", "text": text}]})
    call = out["content"][0]
    assert call["input"] == {"command": "ls"}
    request = history({**call, "input": {"command": "ls"}}, "a\nb\n")
    assert guard.outbound(request).payload["messages"][2]["content"][0]["content"] == "a\n"


def test_outbound_bytes_applies_the_pipeline_as_outbound_does(guard: Engine) -> None:
    guard.inbound({"content": [use("toolu_1", COMMAND)]})
    request = history(use("toolu_1", "npm test 2>&1"), OUTPUT)
    request["messages"][0]["content"] = "x" * 100_000  # past the message cache's size floor
    body = orjson.dumps(request)
    assert guard.outbound_bytes(body).body == orjson.dumps(guard.outbound(request).payload)
    assert b"FAIL b\\nFAIL d\\n" in guard.outbound_bytes(body).body
