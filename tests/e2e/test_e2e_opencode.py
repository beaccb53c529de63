"""The real opencode CLI against an upstream that answers in Claude Code's dialect.

Through ``bridge-rules serve --rules opencode`` (a separate process), one turn of
Claude Code calls (Read, Edit, Write, Bash, Grep, Glob, TodoWrite) must each run in opencode
without error, with the files on disk really changed; the upstream must see
Claude Code's tool names and schemas, and the calls replayed in Claude Code's
form. Straight at the upstream, the same Read fails in opencode.

Setup: npm installs opencode-ai@1.18.33 into the shared cache (toolchain.py); opencode's
grep and glob run the venv's ripgrep (``rg``), which the dev extras install.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fake_upstream import FakeUpstream, Recorded, replayed_calls, tool_results
from opencode_driver import (
    bridge_rules_serve,
    run_opencode,
)

from bridge_rules.pins import load_pin

# opencode is installed with npm on first use: registry access is needed.
pytestmark = pytest.mark.e2e

HELLO = "Hello from the opencode e2e test file.\nSecond line: 42.\n"
TOOLS = {"Bash", "Edit", "Glob", "Grep", "Read", "Skill", "Agent", "TodoWrite", "WebFetch", "Write"}


@pytest.fixture(scope="session")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("opencode-home")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "hello.txt").write_text(HELLO)
    (project / "edit_me.txt").write_text("answer = 42\n")
    (project / "src" / "find_me.py").write_text("# the NEEDLE is here\n")
    (project / "notes.txt").write_text("a needle in a text file\n")
    return project


def calls_for(project: Path) -> list[dict[str, Any]]:
    """One turn of calls as Claude Code writes them (absolute paths, its field names)."""
    return [
        {"name": "Read", "input": {"file_path": str(project / "hello.txt")}},
        {
            "name": "Edit",
            "input": {
                "file_path": str(project / "edit_me.txt"),
                "old_string": "42",
                "new_string": "43",
            },
        },
        {
            "name": "Write",
            "input": {"file_path": str(project / "new.txt"), "content": "written by Write\n"},
        },
        {
            "name": "Bash",
            "input": {
                "command": "echo bash-ran-$((40 + 2))",
                "timeout": 20000,
                "description": "Print a marker",
            },
        },
        # -i: opencode's grep has no such field; the profile turns it into (?i)
        {"name": "Grep", "input": {"pattern": "needle", "glob": "*.py", "-i": True}},
        {"name": "Glob", "input": {"pattern": "**/*.py"}},
        # items without opencode's required `priority`, with Claude Code's `activeForm`
        {
            "name": "TodoWrite",
            "input": {
                "todos": [
                    {
                        "content": "Bridge opencode",
                        "status": "in_progress",
                        "activeForm": "Bridging",
                    }
                ]
            },
        },
    ]


def agent_turns(requests: list[Recorded]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The request that got the calls and the one that brought their results (opencode's
    title request has no tools and is left out)."""
    with_tools = [r.json for r in requests if r.path == "/v1/messages" and r.json.get("tools")]
    first = next(p for p in with_tools if not tool_results(p))
    second = next(p for p in with_tools if tool_results(p))
    return first, second


def test_opencode_runs_claude_code_calls_through_bridge_rules_serve(
    opencode: Path, home: Path, project: Path, upstream: FakeUpstream
) -> None:
    upstream.script.tool_calls = calls_for(project)
    with bridge_rules_serve(upstream.url, "opencode") as url:
        run = run_opencode(opencode, home, project, url, "Do the thing.")
    assert run.returncode == 0, run.stderr
    first, second = agent_turns(upstream.requests)

    # What the model saw: Claude Code's names, and its schemas where the profile is canonical.
    sent = {t["name"]: t["input_schema"] for t in first["tools"]}
    assert set(sent) == TOOLS
    wire = load_pin("claude-code@2.1.330")
    for name in ("Read", "Edit", "Write", "Grep", "Glob", "Skill"):
        assert sent[name] == wire.tools[name], name
    assert "workdir" in sent["Bash"]["properties"]

    # Each call ran in opencode and succeeded.
    results = {r["tool_use_id"]: r for r in tool_results(second)}
    assert len(results) == 7, results
    for tid, result in results.items():
        assert not result.get("is_error"), (tid, result)
    content = {tid: str(r["content"]) for tid, r in results.items()}
    assert "Second line: 42." in content["toolu_fake0000"]  # Read
    assert "Edit applied" in content["toolu_fake0001"]  # Edit
    assert "bash-ran-42" in content["toolu_fake0003"]  # Bash
    assert "find_me.py" in content["toolu_fake0004"]  # Grep: -i honoured, include honoured
    assert "notes.txt" not in content["toolu_fake0004"]
    assert "find_me.py" in content["toolu_fake0005"]  # Glob
    assert "Bridge opencode" in content["toolu_fake0006"]  # TodoWrite
    assert (project / "edit_me.txt").read_text() == "answer = 43\n"
    assert (project / "new.txt").read_text() == "written by Write\n"
    assert "FAKE-UPSTREAM-FINAL: got 7 tool_result(s)" in run.stdout

    # History went back upstream in Claude Code's form.
    expected = calls_for(project)
    expected[3]["input"].pop("description")  # a UI label opencode's bash has no field for
    expected[4]["input"] = {"pattern": "(?i)needle", "glob": "*.py"}  # the flag, in the pattern
    expected[6]["input"]["todos"][0]["activeForm"] = "Bridge opencode"  # from content
    assert replayed_calls(second) == expected


def test_opencode_without_the_proxy_rejects_claude_codes_arguments(
    opencode: Path, home: Path, project: Path, upstream: FakeUpstream
) -> None:
    upstream.script.tool_calls = calls_for(project)[:2]
    run = run_opencode(opencode, home, project, upstream.url, "Do the thing.")
    assert run.returncode == 0, run.stderr  # opencode reports the failure to the model
    _, second = agent_turns(upstream.requests)
    for result in tool_results(second):
        assert result["is_error"] is True
        assert 'SchemaError(Missing key\n  at ["filePath"])' in result["content"]
    assert (project / "edit_me.txt").read_text() == "answer = 42\n"  # nothing edited
