"""What repair records stays out of the arguments; a stripped pipeline is applied to the result.

The pi-tool-guard profile both ways: the agent never receives `_piToolGuard*` keys (message
and stream), history never sends them upstream, and the next request's `tool_result` gets
the removed extractors applied. What was stripped travels in the call's sealed id, so a
second engine (another worker, another replica) with the same key gives the same answer,
and with no key nothing is stripped.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from ruamel.yaml import YAML
from tests.transform.conftest import tool_calls

import bridge_rules
from bridge_rules.engine import Engine
from bridge_rules.repair.extract import run_pipeline
from bridge_rules.sealing import MARK

HERE = Path(__file__).parent
EXTRACT_CASES: list[dict[str, Any]] = YAML(typ="safe").load(
    (HERE / "data" / "extractors.yaml").read_text(encoding="utf-8")
)
KEY = b"k" * 32
COMMAND = "npm test 2>&1 | grep FAIL | head -n 2"
OUTPUT = "ok a\nFAIL b\nok c\nFAIL d\nFAIL e\n"


@pytest.mark.parametrize(
    "case", EXTRACT_CASES, ids=[" | ".join(c["pipeline"]) for c in EXTRACT_CASES]
)
def test_extractors(case: dict[str, Any]) -> None:
    assert run_pipeline(case["pipeline"], case["text"]) == case["out"]


@pytest.fixture
def guard() -> Engine:
    return bridge_rules.load("pi-tool-guard", seal_key=KEY)


def other_worker() -> Engine:
    """A separate engine with the same rules and key: shares nothing with ``guard``."""
    return bridge_rules.load("pi-tool-guard", seal_key=KEY)


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


def sealed_call(eng: Engine, call_id: str = "toolu_1", command: str = COMMAND) -> dict[str, Any]:
    """The tool_use block the agent gets (and echoes back in its history)."""
    block: dict[str, Any] = eng.inbound({"content": [use(call_id, command)]})["content"][0]
    return block


def test_agent_gets_no_internal_keys(guard: Engine) -> None:
    out = guard.inbound({"content": [use("toolu_1", COMMAND, timeout=5)]})
    assert out["content"][0]["input"] == {"command": "npm test 2>&1", "timeout": 5}


def test_a_stripped_call_gets_a_sealed_id_the_api_accepts(guard: Engine) -> None:
    call = sealed_call(guard)
    assert call["id"].startswith("toolu_1" + MARK)
    assert re.fullmatch(r"[a-zA-Z0-9_-]+", call["id"])
    assert sealed_call(other_worker())["id"] == call["id"]  # deterministic: any worker


def test_a_call_nothing_stripped_keeps_its_id(guard: Engine) -> None:
    assert sealed_call(guard, command="npm test")["id"] == "toolu_1"


@pytest.mark.parametrize("result", [OUTPUT, [{"type": "text", "text": OUTPUT}]])
def test_another_worker_applies_the_pipeline_to_the_result(guard: Engine, result: Any) -> None:
    call = sealed_call(guard)
    request = history(call, result)
    before = orjson.dumps(request)
    sent = other_worker().outbound(request).payload
    assert orjson.dumps(request) == before  # the input is never mutated
    back, answer = sent["messages"][1]["content"][0], sent["messages"][2]["content"][0]
    assert back["id"] == "toolu_1"  # byte for byte
    assert answer["tool_use_id"] == "toolu_1"
    assert back["input"] == {"command": COMMAND}  # the model sees the call it wrote
    filtered = answer["content"] if isinstance(result, str) else answer["content"][0]["text"]
    assert filtered == "FAIL b\nFAIL d\n"
    assert guard.outbound(request).payload == sent  # every later request: the same history


def test_unsealed_ids_pass_unchanged(guard: Engine) -> None:
    request = history(use("toolu_9", "npm test 2>&1"), OUTPUT)
    assert guard.outbound(request).payload["messages"] == request["messages"]


def test_a_forged_or_foreign_seal_is_not_opened(guard: Engine) -> None:
    call = sealed_call(guard)
    forged = call["id"][:-1] + ("a" if call["id"][-1] != "a" else "b")
    foreign = bridge_rules.load("pi-tool-guard", seal_key=b"x" * 32)
    for eng, call_id in ((guard, forged), (foreign, call["id"])):
        request = history({**call, "id": call_id}, OUTPUT)
        assert eng.outbound(request).payload["messages"] == request["messages"]


def test_without_a_key_nothing_is_stripped() -> None:
    plain = bridge_rules.load("pi-tool-guard")
    out = plain.inbound({"content": [use("toolu_1", COMMAND)]})["content"][0]
    assert out["id"] == "toolu_1"
    assert out["input"] == {"command": COMMAND}  # the agent runs what the model wrote
    assert plain.inbound_call("bash", {"command": COMMAND}).arguments == {"command": COMMAND}


def test_stream_gives_no_internal_keys_and_seals_the_id(guard: Engine) -> None:
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
    for chunks in ([stream], [stream[i : i + 7] for i in range(0, len(stream), 7)]):
        out = b"".join(guard.inbound_stream(chunks))
        assert b"_piToolGuard" not in out
        assert tool_calls(out) == [("bash", {"command": "npm test 2>&1"})]
        assert sealed_call(guard)["id"].encode() in out  # the same id as the JSON answer


def test_a_stage_it_cannot_reproduce_runs_in_the_agent(guard: Engine) -> None:
    command = "cat log | awk '{print $2}'"
    out = guard.inbound({"content": [use("toolu_1", command)]})
    assert out["content"][0]["input"] == {"command": command}
    assert out["content"][0]["id"] == "toolu_1"  # nothing stripped, nothing sealed
    request = history(out["content"][0], OUTPUT)
    sent = guard.outbound(request).payload
    assert sent["messages"][1:] == request["messages"][1:]


def test_history_never_sends_internal_keys(guard: Engine) -> None:
    leaked = use("toolu_2", "ls", _piToolGuardOriginalCommand="ls | head", _piToolGuardRemoved=True)
    sent = guard.outbound(history(leaked, "a")).payload
    assert sent["messages"][1]["content"][0]["input"] == {"command": "ls"}


def test_a_recovered_call_is_sealed_too(tmp_path: Path) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text(
        "bridge-rules: 1\nextends: pi-tool-guard\ntext:\n  recover_tool_calls: true\n",
        encoding="utf-8",
    )
    guard = bridge_rules.load(str(rules), seal_key=KEY)
    text = '<tool_call>{"name": "bash", "arguments": {"command": "ls | head -n 1"}}</tool_call>'
    out = guard.inbound({"id": "msg_r", "content": [{"type": "text", "text": text}]})
    call = out["content"][0]
    assert call["input"] == {"command": "ls"}
    request = history({**call, "input": {"command": "ls"}}, "a\nb\n")
    again = bridge_rules.load(str(rules), seal_key=KEY)
    assert again.outbound(request).payload["messages"][2]["content"][0]["content"] == "a\n"


def test_outbound_bytes_applies_the_pipeline_as_outbound_does(guard: Engine) -> None:
    request = history(sealed_call(guard), OUTPUT)
    request["messages"][0]["content"] = "x" * 100_000  # past the message cache's size floor
    body = orjson.dumps(request)
    for _ in range(2):  # the second time from the message cache
        assert guard.outbound_bytes(body).body == orjson.dumps(guard.outbound(request).payload)
        assert b"FAIL b\\nFAIL d\\n" in guard.outbound_bytes(body).body
