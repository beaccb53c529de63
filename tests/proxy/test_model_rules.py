"""``models:`` through the proxy, with the official SDK as the client, against an upstream
that refuses what each 5.x model refuses (tests/e2e/model_upstream.py, written from the
reference notes, not from the profile). Every request the rules fit is accepted, and what
reached the upstream differs from what the client sent only at the paths a rule names
(tests/e2e/jsondiff.py, the structural oracle)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import pytest
from jsondiff import differences, within
from model_upstream import FORCED_ERROR, SIGNATURE_ERROR, ModelUpstream
from servers import running_app

import bridge_rules
from bridge_rules.proxy import ProxyConfig, create_app

TOOLS = [{"name": "finish", "description": "End.", "input_schema": {"type": "object"}}]


@pytest.fixture
def models_upstream() -> Iterator[ModelUpstream]:
    with ModelUpstream() as server:
        server.script.tool_calls = []
        yield server


def _proxy(upstream: ModelUpstream, rules: str | Path | None = None) -> Any:
    engine = bridge_rules.load(rules)
    return running_app(create_app(ProxyConfig(upstream=upstream.url), engine=engine))


def _client(url: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=url, api_key="sk-ant-dummy", max_retries=0)


def _sent(upstream: ModelUpstream) -> dict[str, Any]:
    body: dict[str, Any] = upstream.requests[-1].json
    return body


def _any_tool_refused(upstream: ModelUpstream, rules: Path, pattern: str, model: str) -> str:
    """The 400 a request forcing a tool on ``model`` gets under an overlay whose
    ``tool_choice: {forced: ...}`` for ``pattern`` is named by the file's stem."""
    rules.write_text(
        f"bridge-rules: 1\nextends: default\nmodels:\n  {pattern}:\n"
        f"    tool_choice: {{forced: {rules.stem}}}\n",
        encoding="utf-8",
    )
    with _proxy(upstream, rules) as url, pytest.raises(anthropic.BadRequestError) as err:
        _client(url).messages.create(
            model=model,
            max_tokens=100,
            messages=[{"role": "user", "content": "go"}],
            tools=TOOLS,  # type: ignore[arg-type]
            tool_choice={"type": "any"},
        )
    return str(err.value)


def test_forced_tool_to_sonnet_5_5_is_sent_as_auto_with_the_tool_named(
    models_upstream: ModelUpstream,
) -> None:
    asked: dict[str, Any] = {
        "model": "claude-sonnet-5-5",
        "max_tokens": 100,
        "system": "You are terse.",
        "messages": [{"role": "user", "content": "done?"}],
        "tools": TOOLS,
        "tool_choice": {"type": "tool", "name": "finish"},
    }
    with _proxy(models_upstream) as url:
        reply = _client(url).messages.create(**asked)
    assert reply.type == "message"
    sent = _sent(models_upstream)
    assert models_upstream.refused == []
    assert sent["tool_choice"] == {"type": "auto"}
    wire = sent["tools"][0]["name"]  # the default names rules rename `finish` too
    assert sent["system"] == f"You are terse.\n\nYou must call the tool `{wire}` in your response."
    assert (
        within(differences(asked, sent), {("tool_choice",), ("system",), ("tools", 0, "name")})
        == set()
    )


def test_the_fake_refuses_what_the_rules_fix(
    models_upstream: ModelUpstream, tmp_path: Path
) -> None:
    """Without the rule (an overlay that keeps the forced choice) the upstream's 400 comes
    back: the fake enforces the constraint, so the test above is not vacuous."""
    error = _any_tool_refused(
        models_upstream, tmp_path / "keep.yaml", "claude-sonnet-5-*", "claude-sonnet-5-5"
    )
    assert FORCED_ERROR in error


def test_refuse_answers_400_before_anything_is_sent(
    models_upstream: ModelUpstream, tmp_path: Path
) -> None:
    error = _any_tool_refused(
        models_upstream, tmp_path / "refuse.yaml", "claude-opus-5-5", "claude-opus-5-5"
    )
    assert "refuse.yaml:5" in error
    assert models_upstream.requests == []


@pytest.mark.parametrize("stream", [False, True])
def test_model_switch_with_thinking_in_history_is_accepted(
    models_upstream: ModelUpstream, stream: bool
) -> None:
    """Turn 1 on Opus 5.5 thinks; the client replays its answer as is. Turn 2 on the same
    model keeps the block (its mark taken off: the signature checks). Turn 3 switches to
    Sonnet 5.5: Opus's block is left out, where replaying it would be a 400."""
    client_messages: list[dict[str, Any]] = [{"role": "user", "content": "plan it"}]
    sent_bodies: list[dict[str, Any]] = []
    asked_bodies: list[dict[str, Any]] = []
    with _proxy(models_upstream) as url:
        client = _client(url)
        for model in ("claude-opus-5-5", "claude-opus-5-5", "claude-sonnet-5-5"):
            asked = {
                "model": model,
                "max_tokens": 2000,
                "thinking": {"type": "adaptive"},
                "messages": list(client_messages),
            }
            if stream:
                with client.messages.stream(**asked) as events:
                    reply = events.get_final_message()
            else:
                reply = client.messages.create(**asked)
            asked_bodies.append({**asked, "stream": True} if stream else asked)
            sent_bodies.append(_sent(models_upstream))
            content = [b.model_dump(exclude_none=True) for b in reply.content]
            for block in content:
                if block["type"] == "thinking":
                    block.pop("citations", None)
            client_messages += [
                {"role": "assistant", "content": content},
                {"role": "user", "content": "go on"},
            ]
    assert models_upstream.refused == []
    second, third = sent_bodies[1], sent_bodies[2]
    kept = second["messages"][1]["content"][0]
    assert kept["type"] == "thinking"
    assert kept["signature"].startswith("sig")  # the mark taken off
    assert within(differences(asked_bodies[1], second), set()) == {
        ("messages", 1, "content", 0, "signature")
    }
    assert [b["type"] for m in third["messages"][1::2] for b in m["content"]] == ["text", "text"]
    assert (
        within(
            differences(asked_bodies[2], third),
            {("messages", 1, "content"), ("messages", 3, "content")},
        )
        == set()
    )


def test_the_fake_refuses_a_foreign_thinking_block(models_upstream: ModelUpstream) -> None:
    with _proxy(models_upstream) as url:
        client = _client(url)
        first = client.messages.create(
            model="claude-opus-5-5",
            max_tokens=2000,
            thinking={"type": "adaptive"},  # type: ignore[typeddict-item]
            messages=[{"role": "user", "content": "plan it"}],
        )
    thinking = first.content[0].model_dump(exclude_none=True)
    thinking["signature"] = thinking["signature"].split("~")[-1]  # as an unmarked client would
    history = [
        {"role": "user", "content": "plan it"},
        {"role": "assistant", "content": [thinking, {"type": "text", "text": "ok"}]},
        {"role": "user", "content": "go on"},
    ]
    with _proxy(models_upstream) as url, pytest.raises(anthropic.BadRequestError) as err:
        _client(url).messages.create(
            model="claude-sonnet-5-5",
            max_tokens=2000,
            thinking={"type": "adaptive"},  # type: ignore[typeddict-item]
            messages=history,  # type: ignore[arg-type]
        )
    assert SIGNATURE_ERROR in str(err.value)  # unknown: keep (the profile's choice) replays it


def test_mid_conversation_system_message_is_folded_for_sonnet_5(
    models_upstream: ModelUpstream,
) -> None:
    asked: dict[str, Any] = {
        "model": "claude-sonnet-5",
        "max_tokens": 100,
        "system": "Base.",
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "hello"},
            {"role": "system", "content": "The user is now in plan mode."},
            {"role": "user", "content": "plan"},
        ],
    }
    with _proxy(models_upstream) as url:
        http = _client(url)._client  # the SDK's own httpx client: role system is not typed
        r = http.post(url + "/v1/messages", json=asked, headers={"x-api-key": "sk-ant-dummy"})
    assert r.status_code == 200, r.text
    sent = _sent(models_upstream)
    assert sent["system"] == "Base.\n\nThe user is now in plan mode."
    assert [m["role"] for m in sent["messages"]] == ["user", "assistant", "user"]
    assert within(differences(asked, sent), {("messages",), ("system",)}) == set()
    assert sent["messages"] == [m for m in asked["messages"] if m["role"] != "system"]


def test_thinking_disabled_is_replaced_on_opus_5_5(models_upstream: ModelUpstream) -> None:
    asked: dict[str, Any] = {
        "model": "claude-opus-5-5",
        "max_tokens": 100,
        "thinking": {"type": "disabled"},
        "messages": [{"role": "user", "content": "hi"}],
    }
    with _proxy(models_upstream) as url:
        reply = _client(url).messages.create(**asked)
    assert reply.role == "assistant"
    sent = _sent(models_upstream)
    assert sent["thinking"] == {"type": "adaptive"}
    assert within(differences(asked, sent), {("thinking",)}) == set()
