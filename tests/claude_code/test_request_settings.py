"""What the client's request asks of the model reaches the model's endpoint through the
real CLI: the model id, the output budget, sampling, ``metadata``, and ``tool_choice``
naming a tool as the CLI offers it."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from scripted import ScriptedEndpoint, done, serving

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("claude-code")]


def ask(**settings: Any) -> dict[str, Any]:
    return {
        "model": "claude-sonnet-4-6",
        "max_tokens": 300,
        "messages": [{"role": "user", "content": "look it up"}],
        "tools": [
            {"name": "Read", "description": "read", "input_schema": {"type": "object"}},
            {"name": "search_docs", "description": "search", "input_schema": {"type": "object"}},
        ],
        **settings,
    }


def test_sampling_metadata_and_a_named_tool_choice_reach_the_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = {
        "temperature": 0.3,
        "top_k": 5,
        "stop_sequences": ["END"],
        "metadata": {"user_id": "user-7"},
        "tool_choice": {"type": "tool", "name": "search_docs", "disable_parallel_tool_use": True},
    }
    endpoint = ScriptedEndpoint([done("found it")])
    with endpoint, serving(endpoint, monkeypatch) as proxy:
        reply = httpx.post(f"{proxy}/v1/messages", json=ask(**settings), timeout=60).json()
    assert reply["content"] == [{"type": "text", "text": "found it"}]
    (sent,) = endpoint.turns
    assert sent["model"] == "claude-sonnet-4-6"
    assert sent["max_tokens"] == 300
    assert {k: sent.get(k) for k in ("temperature", "top_k", "stop_sequences", "metadata")} == {
        k: settings[k] for k in ("temperature", "top_k", "stop_sequences", "metadata")
    }
    # The default rules send search_docs as mcp__pi__search_docs, and the CLI offers it so.
    assert "mcp__pi__search_docs" in [t["name"] for t in sent["tools"]]
    assert sent["tool_choice"] == {
        "type": "tool",
        "name": "mcp__pi__search_docs",
        "disable_parallel_tool_use": True,
    }


@pytest.mark.parametrize("choice", [{"type": "any"}, {"type": "tool", "name": "Read"}])
def test_other_tool_choices_reach_the_model_as_they_are(
    monkeypatch: pytest.MonkeyPatch, choice: dict[str, Any]
) -> None:
    endpoint = ScriptedEndpoint([done()])
    with endpoint, serving(endpoint, monkeypatch) as proxy:
        reply = httpx.post(f"{proxy}/v1/messages", json=ask(tool_choice=choice), timeout=60)
    assert reply.status_code == 200
    assert endpoint.turns[0]["tool_choice"] == choice
