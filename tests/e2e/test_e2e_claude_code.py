"""Real agents through ``serve --upstream claude-code``: the real Claude Code CLI (the one
in the claude-agent-sdk wheel) answers, against a scripted local Messages endpoint.

The agent (pi, opencode; the anthropic SDK runs in the normal suite, tests/claude_code)
does a three-turn task, read, edit and bash, that changes files in its scratch project. The
endpoint must see, on every turn, Claude Code's tools, the whole conversation replayed
with the agent's own results, and no result the CLI made up; and every call the model
proposed must have been closed by the CLI without running (denied by the proxy, or
refused by the CLI's own input check).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from fake_upstream import replayed_calls
from opencode_driver import run_opencode
from pi_driver import HELLO, run_pi
from scripted import ScriptedEndpoint, calls, done
from servers import running_app

from bridge_rules.proxy import ProxyConfig, create_app

pytest.importorskip("claude_agent_sdk", reason="the claude-code extra is not installed")
DENIED = "Not run here: bridge-rules proposes this call"

pytestmark = pytest.mark.e2e


def tool_results(turn: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        b
        for m in turn["messages"]
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]


READ = {"name": "Read", "input": {"file_path": "hello.txt"}}
EDIT = {"name": "Edit", "input": {"file_path": "hello.txt", "old_string": "42", "new_string": "43"}}
BASH = {"name": "Bash", "input": {"command": "cp hello.txt copy.txt"}}


def test_pi_completes_a_task_through_the_claude_code_cli(
    pi: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    endpoint = ScriptedEndpoint(
        [calls((c["name"], c["input"])) for c in (READ, EDIT, BASH)] + [done("PI-TASK-DONE")]
    )
    caplog.set_level(logging.INFO, "bridge_rules.proxy.claude_code")
    with endpoint:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", endpoint.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
        with running_app(create_app(ProxyConfig(upstream="claude-code"))) as url:
            run = run_pi(pi, tmp_path, url, "Change 42 to 43 in hello.txt and copy it.")
        turns = endpoint.turns
    edited = HELLO.replace("42", "43")
    assert run.returncode == 0, run.stderr
    assert "PI-TASK-DONE" in run.stdout
    assert (run.project / "hello.txt").read_text() == edited
    assert (run.project / "copy.txt").read_text() == edited
    assert len(turns) == 4  # one model call per pi request: the CLI made none of its own
    for n, turn in enumerate(turns):
        names = {t["name"] for t in turn["tools"]}
        assert {"Read", "Edit", "Bash", "Write"} <= names
        assert not {"read", "edit", "bash"} & names
        assert replayed_calls(turn) == [READ, EDIT, BASH][:n]  # the history, in wire form
        results = tool_results(turn)
        assert [r["tool_use_id"] for r in results] == [f"toolu_turn{i}_0000" for i in range(n)]
        assert all(not r.get("is_error") for r in results), results
        assert DENIED not in str(turn["messages"])
    assert "Second line: 42." in str(tool_results(turns[1]))  # pi's read reached the model
    lines = [r.getMessage() for r in caplog.records]
    not_run = [line.split()[3].rstrip(":") for line in lines if "claude-code: not run" in line]
    denied = {line.split()[2] for line in lines if "claude-code: denied" in line}
    # Each call the CLI closed itself: denied by the proxy, or (the Edit of a file the
    # CLI never read) refused by its own input check; none ran.
    assert not_run == ["Read", "Edit", "Bash"]
    assert {"Read", "Bash"} <= denied


def test_opencode_completes_a_task_through_the_claude_code_cli(
    opencode: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    hello = project / "hello.txt"
    hello.write_text(HELLO)
    steps = [
        {"name": "Read", "input": {"file_path": str(hello)}},
        {
            "name": "Edit",
            "input": {"file_path": str(hello), "old_string": "42", "new_string": "43"},
        },
        {
            "name": "Bash",
            "input": {"command": "cp hello.txt copy.txt", "description": "Copy the file"},
        },
    ]
    endpoint = ScriptedEndpoint(
        [calls((c["name"], c["input"])) for c in steps] + [done("OPENCODE-TASK-DONE")]
    )
    caplog.set_level(logging.INFO, "bridge_rules.proxy.claude_code")
    with endpoint:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", endpoint.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
        config = ProxyConfig(upstream="claude-code", rules=("opencode",))
        with running_app(create_app(config)) as url:
            run = run_opencode(opencode, tmp_path / "home", project, url, "Bump and copy.")
        turns = endpoint.turns
    edited = HELLO.replace("42", "43")
    assert run.returncode == 0, run.stderr
    assert "OPENCODE-TASK-DONE" in run.stdout
    assert hello.read_text() == edited
    assert (project / "copy.txt").read_text() == edited
    assert len(turns) == 4, [replayed_calls(t) for t in turns]
    for n, turn in enumerate(turns):
        assert {"Read", "Edit", "Bash", "Write"} <= {t["name"] for t in turn["tools"]}
        assert [c["name"] for c in replayed_calls(turn)] == ["Read", "Edit", "Bash"][:n]
        results = tool_results(turn)
        assert [r["tool_use_id"] for r in results] == [f"toolu_turn{i}_0000" for i in range(n)]
        assert all(not r.get("is_error") for r in results), results
        assert DENIED not in str(turn["messages"])
    assert replayed_calls(turns[3])[1]["input"] == steps[1]["input"]  # replayed in wire form
    lines = [r.getMessage() for r in caplog.records]
    not_run = [line.split()[3].rstrip(":") for line in lines if "claude-code: not run" in line]
    denied = {line.split()[2] for line in lines if "claude-code: denied" in line}
    assert not_run == ["Read", "Edit", "Bash"]  # the CLI closed every call; none ran
    assert {"Read", "Bash"} <= denied
