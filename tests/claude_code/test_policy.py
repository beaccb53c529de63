"""The policy: tools the CLI may run itself. By default none runs (test_faults); named
ones run inside the CLI, which then calls the model again, and the client gets one
answer without their blocks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from scripted import ScriptedEndpoint, calls, done, serving
from tests.claude_code.mcp_stub import mcp_config

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("claude-code")]
ASK: Any = {
    "model": "claude-sonnet-4-6",
    "max_tokens": 512,
    "messages": [{"role": "user", "content": "go"}],
    "tools": [{"name": "Bash", "description": "run", "input_schema": {"type": "object"}}],
}


def results(turn: dict[str, Any]) -> str:
    last = turn["messages"][-1]["content"]
    return json.dumps([b for b in last if isinstance(b, dict) and b.get("type") == "tool_result"])


def test_an_allowed_builtin_runs_in_the_cli_and_stays_out_of_the_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    endpoint = ScriptedEndpoint(
        [calls(("Bash", {"command": "echo ran-by-the-cli"})), done("it said so")]
    )
    with endpoint, serving(endpoint, monkeypatch, claude_allow=("Bash",)) as proxy:
        reply = httpx.post(f"{proxy}/v1/messages", json=ASK, timeout=60).json()
    assert [b["type"] for b in reply["content"]] == ["text", "text"]
    assert reply["content"][1]["text"] == "it said so"
    assert reply["stop_reason"] == "end_turn"
    assert len(endpoint.turns) == 2
    assert "ran-by-the-cli" in results(endpoint.turns[1])


def test_the_users_own_mcp_server_runs_when_the_policy_allows_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    endpoint = ScriptedEndpoint([calls(("mcp__mine__shout", {"text": "quiet"})), done("shouted")])
    settings: Any = {"claude_allow": ("mcp__mine__*",), "claude_mcp_config": mcp_config(tmp_path)}
    with endpoint, serving(endpoint, monkeypatch, **settings) as proxy:
        reply = httpx.post(f"{proxy}/v1/messages", json=ASK, timeout=60).json()
    assert reply["content"][-1]["text"] == "shouted"
    assert "mcp__mine__shout" in [t["name"] for t in endpoint.turns[0]["tools"]]
    assert "QUIET" in results(endpoint.turns[1])


@pytest.mark.parametrize("model", ["claude-sonnet-4-6", "sonnet"])
def test_a_call_to_a_denied_tool_is_denied_on_the_claude_code_upstream_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: str
) -> None:
    """The rules' policy judges the CLI's answer as it judges an HTTP upstream's, with the
    name gate open or shut: a ``BASH`` call the model makes comes back as text."""
    rules = tmp_path / "rules.yaml"
    rules.write_text("bridge-rules: 1\nextends: opencode\npolicy:\n  deny: [Bash]\n")
    ask = {**ASK, "model": model, "tools": [{"name": "read", "input_schema": {"type": "object"}}]}
    endpoint = ScriptedEndpoint([calls(("BASH", {"command": "id"}))])
    with endpoint, serving(endpoint, monkeypatch, rules=(str(rules),)) as proxy:
        reply = httpx.post(f"{proxy}/v1/messages", json=ask, timeout=60).json()
    assert {b["type"] for b in reply["content"]} == {"text"}
    assert "policy.deny 'Bash'" in reply["content"][-1]["text"]
    assert reply["stop_reason"] == "end_turn"
