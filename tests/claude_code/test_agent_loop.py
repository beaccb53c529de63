"""The official ``anthropic`` SDK as an agent, through ``serve --upstream claude-code``, with
the real CLI (the one in the claude-agent-sdk wheel) against a scripted local endpoint.

The agent holds pi-shaped tools (read, edit, bash) and runs the calls itself in a scratch
directory; the CLI only proposes them. Each turn the endpoint must see the wire tools,
the whole conversation so far (tool calls and results included), and no result the
CLI made up itself.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from pi_tools import TOOLS, run_tool
from scripted import ScriptedEndpoint, calls, done, serving

from bridge_rules.proxy.claude_code.session import DENIED

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("claude-code")]
MODEL = "claude-sonnet-4-6"
SYSTEM = "You are the test agent. Work in the project."


def script(work: Path) -> ScriptedEndpoint:
    hello = str(work / "hello.txt")
    return ScriptedEndpoint(
        [
            calls(("Read", {"file_path": hello})),
            calls(("Edit", {"file_path": hello, "old_string": "world", "new_string": "claude"})),
            calls(("Bash", {"command": "cat hello.txt > copy.txt"})),
            done(),
        ]
    )


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "hello.txt").write_text("hello world\n")
    return tmp_path


@pytest.mark.parametrize("streaming", [False, True], ids=["json", "stream"])
def test_anthropic_sdk_completes_a_task_through_the_cli(
    work: Path, streaming: bool, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import anthropic

    caplog.set_level(logging.INFO, "bridge_rules.proxy.claude_code")
    with script(work) as endpoint, serving(endpoint, monkeypatch) as url:
        client = anthropic.Anthropic(base_url=url, api_key="sk-ant-client", max_retries=0)
        messages: list[Any] = [{"role": "user", "content": "Make hello.txt greet claude."}]
        for _ in range(6):
            kwargs: Any = {"model": MODEL, "max_tokens": 2048, "system": SYSTEM, "tools": TOOLS}
            if streaming:
                with client.messages.stream(messages=messages, **kwargs) as stream:
                    reply = stream.get_final_message()
            else:
                reply = client.messages.create(messages=messages, **kwargs)
            messages.append(
                {"role": "assistant", "content": [b.model_dump() for b in reply.content]}
            )
            if reply.stop_reason != "tool_use":
                break
            results = [
                {
                    "type": "tool_result",
                    "tool_use_id": b.id,
                    "content": run_tool(work, b.name, b.input),
                }
                for b in reply.content
                if b.type == "tool_use"
            ]
            messages.append({"role": "user", "content": results})
        turns = endpoint.turns
    assert (work / "hello.txt").read_text() == "hello claude\n"
    assert (work / "copy.txt").read_text() == "hello claude\n"
    assert reply.stop_reason == "end_turn"
    assert len(turns) == 4  # one model call per client request: the CLI made none of its own
    for n, turn in enumerate(turns):
        assert sorted(t["name"] for t in turn["tools"]) == ["Bash", "Edit", "Read"]
        assert SYSTEM in str(turn["system"])
        assert DENIED not in str(turn["messages"])  # no result the CLI made up
        uses = [
            b
            for m in turn["messages"]
            if m["role"] == "assistant"
            for b in m["content"]
            if b.get("type") == "tool_use"
        ]
        results = [
            b
            for m in turn["messages"]
            for b in (m["content"] if isinstance(m["content"], list) else [])
            if b.get("type") == "tool_result"
        ]
        assert [u["name"] for u in uses] == ["Read", "Edit", "Bash"][:n]
        assert [r["tool_use_id"] for r in results] == [u["id"] for u in uses]
    assert "hello world" in str(turns[1]["messages"])  # the read's result reached the model
    assert uses[1]["input"] == {
        "file_path": str(work / "hello.txt"),
        "old_string": "world",
        "new_string": "claude",
    }
    lines = [r.getMessage() for r in caplog.records]
    # each proposed call was closed by the CLI without running: denied, or refused by its
    # own input check
    assert [ln.split()[3].rstrip(":") for ln in lines if "claude-code: not run" in ln] == [
        "Read",
        "Edit",
        "Bash",
    ]
