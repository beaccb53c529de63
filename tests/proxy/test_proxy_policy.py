"""The policy through ``serve``: a denied tool never reaches the upstream, a forced one is a
400, a call to one is counted on ``/metrics``, and ``x-bridge-rules-policy`` only narrows."""

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
from bridge_rules.proxy.ops import with_ops
from bridge_rules.ruleset import load_runtime


@pytest.fixture
def canned() -> Iterator[Canned]:
    with Canned() as server:
        yield server


def rules(tmp_path: Path, policy: str) -> list[str]:
    path = tmp_path / "rules.yaml"
    path.write_text("bridge-rules: 1\nextends: default\npolicy:\n" + policy, encoding="utf-8")
    return [str(path)]


def request(**extra: Any) -> dict[str, Any]:
    tools = [{"name": t, "input_schema": {"type": "object"}} for t in ("read", "write", "bash")]
    return {"model": "claude-sonnet-4-5", "max_tokens": 9,
            "messages": [{"role": "user", "content": "hi"}], "tools": tools, **extra}  # fmt: skip


def sent_tools(canned: Canned) -> list[str]:
    return [t["name"] for t in json.loads(canned.seen[-1].body)["tools"]]


def writes() -> Reply:
    content = [{"type": "tool_use", "id": "toolu_1", "name": "Write", "input": {}}]
    body = {"type": "message", "role": "assistant", "content": content, "stop_reason": "tool_use"}
    return Reply(body=[json.dumps(body).encode()])


def test_the_header_narrows_one_request_only(canned: Canned, tmp_path: Path) -> None:
    canned.reply = writes()
    app = create_app(
        ProxyConfig(upstream=canned.url), load_runtime(rules(tmp_path, "  deny: [bash]\n"))
    )
    with running_app(with_ops(app, canned.url)) as proxy:
        narrowed = loopback.post(
            proxy + "/v1/messages", json=request(), headers={"x-bridge-rules-policy": "read_only"}
        )
        assert sent_tools(canned) == ["Read"]
        assert all(k.lower() != "x-bridge-rules-policy" for k, _ in canned.seen[-1].headers)
        plain = loopback.post(proxy + "/v1/messages", json=request())
        assert sent_tools(canned) == ["Read", "Write"]
        text = loopback.scrape(proxy, "bridge_rules_denied_inbound_total 1.0")
    assert narrowed.status_code == 200
    assert narrowed.json()["content"][0]["type"] == "text"
    assert plain.json()["content"][0]["name"] == "write"
    assert "bridge_rules_denied_inbound_total 1.0" in text


def test_an_unknown_switch_is_a_400(canned: Canned, tmp_path: Path) -> None:
    app = create_app(
        ProxyConfig(upstream=canned.url), load_runtime(rules(tmp_path, "  deny: []\n"))
    )
    with running_app(app) as proxy:
        r = loopback.post(
            proxy + "/v1/messages", json=request(), headers={"x-bridge-rules-policy": "root"}
        )
    assert r.status_code == 400
    assert "unknown policy switch root" in r.json()["error"]["message"]
    assert canned.seen == []


def test_a_forced_denied_tool_is_a_400(canned: Canned, tmp_path: Path) -> None:
    app = create_app(
        ProxyConfig(upstream=canned.url), load_runtime(rules(tmp_path, "  deny: [bash]\n"))
    )
    with running_app(app) as proxy:
        r = loopback.post(
            proxy + "/v1/messages", json=request(tool_choice={"type": "tool", "name": "bash"})
        )
    assert r.status_code == 400
    assert "'bash'" in r.json()["error"]["message"]
    assert "policy.deny 'bash'" in r.json()["error"]["message"]
    assert canned.seen == []


def test_on_denied_error_is_a_403(canned: Canned, tmp_path: Path) -> None:
    canned.reply = writes()
    policy = "  switches: [read_only]\n  on_denied: error\n"
    app = create_app(ProxyConfig(upstream=canned.url), load_runtime(rules(tmp_path, policy)))
    with running_app(app) as proxy:
        r = loopback.post(proxy + "/v1/messages", json=request())
    assert r.status_code == 403
    assert r.json()["error"]["type"] == "permission_error"


def sse_bash_call() -> Reply:
    block = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}
    events = [
        {"type": "message_start", "message": {"id": "msg_1", "type": "message",
         "role": "assistant", "content": [], "model": "m", "stop_reason": None,
         "stop_sequence": None, "usage": {"input_tokens": 3, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": block},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "input_json_delta", "partial_json": '{"command": "id"}'}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
         "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    ]  # fmt: skip
    raw = b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)
    return Reply(body=[raw[:97], raw[97:]], content_type="text/event-stream")


@pytest.mark.parametrize("model", ["gpt-5", "sonnet", "glm-4.6"])
def test_the_policy_holds_with_the_gate_shut(canned: Canned, tmp_path: Path, model: str) -> None:
    """A model id the gate does not match: names stay as the client wrote them, but a denied
    tool is not sent, a forced one is a 400, a call to one comes back as text, in JSON and
    in a stream, and the request's switches narrow it too."""
    app = create_app(
        ProxyConfig(upstream=canned.url), load_runtime(rules(tmp_path, "  deny: [bash]\n"))
    )
    with running_app(with_ops(app, canned.url)) as proxy:
        canned.reply = writes()
        r = loopback.post(
            proxy + "/v1/messages",
            json=request(model=model),
            headers={"x-bridge-rules-policy": "read_only"},
        )
        assert sent_tools(canned) == ["read"]
        assert json.loads(canned.seen[-1].body)["model"] == model
        assert r.json()["content"][0]["type"] == "text"
        canned.reply = sse_bash_call()
        streamed = loopback.post(proxy + "/v1/messages", json=request(model=model, stream=True))
        assert sent_tools(canned) == ["read", "write"]
        forced = loopback.post(
            proxy + "/v1/messages",
            json=request(model=model, tool_choice={"type": "tool", "name": "BASH"}),
        )
    assert r.status_code == 200
    assert streamed.status_code == 200
    assert b'"tool_use"' not in streamed.content
    assert b"policy.deny 'bash'" in streamed.content
    assert forced.status_code == 400
    assert "policy.deny 'bash'" in forced.json()["error"]["message"]


@pytest.mark.xdist_group("sdk")
@pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")
@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "gpt-5"])
def test_the_official_sdk_gets_no_call_to_a_denied_tool(
    canned: Canned, tmp_path: Path, model: str
) -> None:
    """The client that would run the call: the ``anthropic`` SDK's own stream reader
    assembles the answer, with the gate open or shut."""
    import anthropic

    canned.reply = sse_bash_call()
    app = create_app(
        ProxyConfig(upstream=canned.url), load_runtime(rules(tmp_path, "  deny: ['ba*']\n"))
    )
    with running_app(app) as proxy:
        client = anthropic.Anthropic(base_url=proxy, api_key="sk-ant-dummy", max_retries=0)
        ask = request(model=model)
        with client.messages.stream(
            model=model, max_tokens=9, messages=ask["messages"], tools=ask["tools"]
        ) as events:
            message = events.get_final_message()
    assert [b.type for b in message.content] == ["text"]
    assert "policy.deny 'ba*'" in message.content[0].text  # type: ignore[union-attr]
    assert message.stop_reason == "end_turn"
