"""The way back through ``serve`` (issue 15): a request whose tool names the API would refuse
gets a 400 before anything is sent, an unmapped call is named in the
``x-bridge-rules-unmapped`` header, and pi-tool-guard's stripped pipeline is applied to the
next request's ``tool_result``. Real servers on 127.0.0.1; the scripted upstream records what
it was sent."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from canned import Canned, Reply
from servers import running_app
from tests.proxy import loopback

from bridge_rules.proxy import ProxyConfig, create_app
from bridge_rules.ruleset import load_runtime


@pytest.fixture
def canned() -> Iterator[Canned]:
    with Canned() as server:
        yield server


def request(*tools: str, messages: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 10,
        "messages": messages or [{"role": "user", "content": "hi"}],
        "tools": [{"name": t, "input_schema": {"type": "object"}} for t in tools],
    }


def answer(*calls: tuple[str, str, dict[str, Any]]) -> Reply:
    content = [{"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in calls]
    body = {"type": "message", "role": "assistant", "content": content, "stop_reason": "tool_use"}
    return Reply(body=[json.dumps(body).encode()])


def test_a_tool_name_the_api_refuses_is_a_400_and_nothing_is_sent(canned: Canned) -> None:
    app = create_app(ProxyConfig(upstream=canned.url), load_runtime())
    with running_app(app) as proxy:
        r = loopback.post(proxy + "/v1/messages", json=request("read", "a.b"))
    assert r.status_code == 400
    error = r.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert "'a.b'" in error["message"]
    assert canned.seen == []


def test_an_unmapped_call_is_named_in_a_response_header(canned: Canned, tmp_path: Path) -> None:
    rules = tmp_path / "warn.yaml"
    rules.write_text("bridge-rules: 1\nextends: default\ninbound:\n  unmapped: warn\n")
    canned.reply = answer(("t1", "Read", {"file_path": "a"}), ("t2", "Nowhere", {}))
    app = create_app(ProxyConfig(upstream=canned.url), load_runtime([str(rules)]))
    with running_app(app) as proxy:
        r = loopback.post(proxy + "/v1/messages", json=request("read"))
    assert r.status_code == 200
    assert r.headers["x-bridge-rules-unmapped"] == "Nowhere"
    assert [c["name"] for c in r.json()["content"]] == ["read", "Nowhere"]


def test_no_header_when_every_call_maps_back(canned: Canned) -> None:
    canned.reply = answer(("t1", "Read", {"file_path": "a"}))
    app = create_app(ProxyConfig(upstream=canned.url), load_runtime())
    with running_app(app) as proxy:
        r = loopback.post(proxy + "/v1/messages", json=request("read"))
    assert "x-bridge-rules-unmapped" not in r.headers


def test_without_a_seal_key_no_pipeline_is_stripped(
    canned: Canned, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("BRIDGE_RULES_SEAL_KEY", raising=False)
    command = "npm test 2>&1 | grep FAIL | head -n 2"
    canned.reply = answer(("toolu_1", "Bash", {"command": command}))
    app = create_app(ProxyConfig(upstream=canned.url), load_runtime(["pi-tool-guard"]))
    with running_app(app) as proxy:
        call = loopback.post(proxy + "/v1/messages", json=request("bash")).json()["content"][0]
    assert call == {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "bash",
        "input": {"command": command},
    }


def test_a_stripped_pipeline_is_applied_to_the_next_tool_result(
    canned: Canned, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BRIDGE_RULES_SEAL_KEY", "a deployment's secret key")
    command = "npm test 2>&1 | grep FAIL | head -n 2"
    canned.reply = answer(("toolu_1", "Bash", {"command": command}))
    app = create_app(ProxyConfig(upstream=canned.url), load_runtime(["pi-tool-guard"]))
    with running_app(app) as proxy:
        first = loopback.post(proxy + "/v1/messages", json=request("bash")).json()
        call = first["content"][0]
        assert call["input"] == {"command": "npm test 2>&1"}  # the agent runs the bare command
        assert not any(k.startswith("_piToolGuard") for k in call["input"])
        assert call["id"].startswith("toolu_1_brs")  # what was stripped travels in the id
        canned.reply = Reply(body=[b'{"type":"message","role":"assistant","content":[]}'])
        history = [
            {"role": "user", "content": "run the tests"},
            {"role": "assistant", "content": [call]},
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": call["id"], "content": "ok a\nFAIL b\n"
                     "ok c\nFAIL d\nFAIL e\n"}
                ],
            },
        ]  # fmt: skip
        loopback.post(proxy + "/v1/messages", json=request("bash", messages=history))
    sent = json.loads(canned.seen[-1].body)
    assert sent["messages"][1]["content"][0]["input"] == {"command": command}
    assert sent["messages"][1]["content"][0]["id"] == "toolu_1"  # restored byte for byte
    assert sent["messages"][2]["content"][0]["tool_use_id"] == "toolu_1"
    assert sent["messages"][2]["content"][0]["content"] == "FAIL b\nFAIL d\n"


def test_a_response_the_rewrite_leaves_alone_goes_back_byte_for_byte(canned: Canned) -> None:
    """A text answer (or a call under a name nobody renames) is sent as the upstream wrote
    it, spacing and number spelling included; a renamed call is re-serialised."""
    text = (
        b'{ "type": "message",  "role": "assistant",\n  "content": [{"type": "text",'
        b' "text": "done \\u00e9"}], "usage": {"input_tokens": 1.0e1, "output_tokens": 5} }'
    )
    app = create_app(ProxyConfig(upstream=canned.url), load_runtime())
    with running_app(app) as proxy:
        canned.reply = Reply(body=[text])
        same = loopback.post(proxy + "/v1/messages", json=request("read"))
        canned.reply = answer(("t1", "Read", {"file_path": "a"}))
        renamed = loopback.post(proxy + "/v1/messages", json=request("read"))
    assert same.content == text
    assert same.headers["content-length"] == str(len(text))
    assert renamed.content.startswith(b'{"type":"message"')
    assert [c["name"] for c in renamed.json()["content"]] == ["read"]
