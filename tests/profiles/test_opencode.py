"""The `opencode` profile: its pin is the captured request's tools, lint is clean against
both pins, and each built-in tool translates both ways (calls, history, the real request).

``data/opencode-1.18.33-request.json`` is the second request opencode 1.18.33 sent to a
local endpoint (the first, a title request, has no tools); secrets are redacted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import bridge_rules
from bridge_rules.lint.runner import lint_target
from bridge_rules.pins import load_pin

DATA = Path(__file__).resolve().parent / "data"
REQUEST = json.loads((DATA / "opencode-1.18.33-request.json").read_text(encoding="utf-8"))
ENG = bridge_rules.load("opencode")
TOOLS = ["bash", "edit", "glob", "grep", "read", "skill", "task", "todowrite", "webfetch", "write"]
WIRE = load_pin("claude-code@2.1.330")
ENV: dict[str, str] = {}


def test_pin_is_the_captured_tool_surface() -> None:
    pin = load_pin("opencode@1.18.33")
    sent = {t["name"]: t["input_schema"] for t in REQUEST["body"]["tools"]}
    assert sorted(sent) == TOOLS
    assert pin.tools == sent


def test_lint_is_clean_against_both_pins() -> None:
    report = lint_target("opencode")
    assert [d.line() for d in report.diagnostics] == []
    assert ENG.rules.pin is not None
    assert ENG.rules.local_pin is not None
    assert (ENG.rules.pin.spec, ENG.rules.local_pin.spec) == (
        "claude-code@2.1.330",
        "opencode@1.18.33",
    )
    # No suppressions: Skill, the one the profile had, is in the 2.1.330 pin since issue 10.
    assert report.suppressed == []


OUTBOUND_NAMES = [
    ("read", "Read"),
    ("write", "Write"),
    ("edit", "Edit"),
    ("bash", "Bash"),
    ("grep", "Grep"),
    ("glob", "Glob"),
    ("webfetch", "WebFetch"),
    ("todowrite", "TodoWrite"),
    ("task", "Agent"),
    ("skill", "Skill"),
    # custom tools, plugins and opencode's MCP tools get the MCP prefix
    ("my_plugin", "mcp__opencode__my_plugin"),
    ("github_create_issue", "mcp__opencode__github_create_issue"),
    ("mcp__srv__tool", "mcp__srv__tool"),
    ("TodoRead", "mcp__opencode__TodoRead"),  # not a Claude Code tool in 2.1.330
    ("WebSearch", "WebSearch"),  # a tool already named as Claude Code's
]


@pytest.mark.parametrize(("local", "wire"), OUTBOUND_NAMES)
def test_outbound_names(local: str, wire: str) -> None:
    assert ENG.outbound_name(local) == wire


REG = [*TOOLS, "my_plugin"]
# wire name, Claude Code's arguments -> local name, opencode's arguments
INBOUND: list[tuple[str, dict[str, Any], str, dict[str, Any]]] = [
    (
        "Read",
        {"file_path": "/a", "offset": 3, "limit": 9},
        "read",
        {"filePath": "/a", "offset": 3, "limit": 9},
    ),
    ("Read_ide", {"file_path": "/a"}, "read", {"filePath": "/a"}),
    ("read", {"file_path": "/a"}, "read", {"filePath": "/a"}),
    ("Write", {"file_path": "/a", "content": "x"}, "write", {"filePath": "/a", "content": "x"}),
    (
        "Edit",
        {"file_path": "/a", "old_string": "x", "new_string": "y", "replace_all": True},
        "edit",
        {"filePath": "/a", "oldString": "x", "newString": "y", "replaceAll": True},
    ),
    (
        "Bash",
        {"command": "ls", "timeout": 5000, "description": "List files"},
        "bash",
        {"command": "ls", "timeout": 5000},
    ),
    ("Bash", {"command": "ls", "workdir": "/w"}, "bash", {"command": "ls", "workdir": "/w"}),
    (
        "Grep",
        {"pattern": "foo", "glob": "*.py", "output_mode": "content"},
        "grep",
        {"pattern": "foo", "include": "*.py", "output_mode": "content"},
    ),
    ("Grep", {"pattern": "foo", "-i": True}, "grep", {"pattern": "(?i)foo"}),
    ("Grep", {"pattern": "foo", "-i": False}, "grep", {"pattern": "foo"}),
    ("Glob", {"pattern": "**/*.py", "path": "/w"}, "glob", {"pattern": "**/*.py", "path": "/w"}),
    ("WebFetch", {"url": "https://x", "prompt": "summarise"}, "webfetch", {"url": "https://x"}),
    (
        "TodoWrite",
        {"todos": [{"content": "Run tests", "status": "in_progress", "activeForm": "Running"}]},
        "todowrite",
        {"todos": [{"content": "Run tests", "status": "in_progress", "priority": "medium"}]},
    ),
    (
        "Agent",
        {"description": "d", "prompt": "p", "subagent_type": "general-purpose"},
        "task",
        {"description": "d", "prompt": "p", "subagent_type": "general"},
    ),
    (
        "Agent",
        {"description": "d", "prompt": "p", "subagent_type": "Explore"},
        "task",
        {"description": "d", "prompt": "p", "subagent_type": "explore"},
    ),
    (
        "Agent",
        {"description": "d", "prompt": "p"},
        "task",
        {"description": "d", "prompt": "p", "subagent_type": "general"},
    ),
    ("Skill", {"skill": "pdf"}, "skill", {"name": "pdf"}),
    ("Skill", {"name": "pdf"}, "skill", {"name": "pdf"}),
    ("mcp__opencode__my_plugin", {"a": 1}, "my_plugin", {"a": 1}),
]


@pytest.mark.parametrize(
    ("wire", "args", "local", "expected"),
    INBOUND,
    ids=[f"{c[0]}-{i}" for i, c in enumerate(INBOUND)],
)
def test_inbound_calls(
    wire: str, args: dict[str, Any], local: str, expected: dict[str, Any]
) -> None:
    call = ENG.inbound_call(wire, args, registered=REG)
    assert (call.name, call.arguments) == (local, expected)


def test_an_unregistered_custom_tool_is_not_resurrected() -> None:
    assert ENG.inbound_name("mcp__opencode__gone", registered=TOOLS) is None


# local name, opencode's arguments (history) -> wire name, Claude Code's arguments
HISTORY: list[tuple[str, dict[str, Any], str, dict[str, Any]]] = [
    ("read", {"filePath": "/a", "offset": 1}, "Read", {"file_path": "/a", "offset": 1}),
    ("write", {"filePath": "/a", "content": "x"}, "Write", {"file_path": "/a", "content": "x"}),
    (
        "edit",
        {"filePath": "/a", "oldString": "x", "newString": "y", "replaceAll": False},
        "Edit",
        {"file_path": "/a", "old_string": "x", "new_string": "y", "replace_all": False},
    ),
    (
        "bash",
        {"command": "ls", "timeout": 10, "workdir": "/w"},
        "Bash",
        {"command": "ls", "timeout": 10, "workdir": "/w"},
    ),
    ("grep", {"pattern": "(?i)x", "include": "*.ts"}, "Grep", {"pattern": "(?i)x", "glob": "*.ts"}),
    ("glob", {"pattern": "*"}, "Glob", {"pattern": "*"}),
    ("webfetch", {"url": "u", "format": "text"}, "WebFetch", {"url": "u", "format": "text"}),
    (
        "todowrite",
        {
            "todos": [
                {"content": "a", "status": "completed", "priority": "high"},
                {"content": "b", "status": "cancelled", "priority": "low", "id": "2"},
            ]
        },
        "TodoWrite",
        {
            "todos": [
                {"content": "a", "status": "completed", "activeForm": "a"},
                {"content": "b", "status": "cancelled", "activeForm": "b"},
            ]
        },
    ),
    (
        "task",
        {"description": "d", "prompt": "p", "subagent_type": "explore", "task_id": "t"},
        "Agent",
        {"description": "d", "prompt": "p", "subagent_type": "Explore", "task_id": "t"},
    ),
    ("skill", {"name": "pdf"}, "Skill", {"name": "pdf"}),
    ("my_plugin", {"a": 1}, "mcp__opencode__my_plugin", {"a": 1}),
]


@pytest.mark.parametrize(
    ("local", "args", "wire", "expected"), HISTORY, ids=[c[0] for c in HISTORY]
)
def test_history_replay(
    local: str, args: dict[str, Any], wire: str, expected: dict[str, Any]
) -> None:
    call = ENG.outbound_call(local, args)
    assert (call.name, call.arguments) == (wire, expected)


def test_the_captured_request_goes_out_in_claude_codes_names_and_schemas() -> None:
    result = ENG.outbound(REQUEST["body"], env=ENV)
    tools = {t["name"]: t["input_schema"] for t in result.payload["tools"]}
    assert sorted(tools) == sorted(w for local, w in OUTBOUND_NAMES[:10])
    for name in ("Read", "Write", "Edit", "Grep", "Glob", "TodoWrite"):
        assert tools[name] == WIRE.tools[name]  # canonical: what the model was trained on
    assert set(tools["Bash"]["properties"]) == {*WIRE.tools["Bash"]["properties"], "workdir"}
    assert set(tools["WebFetch"]["properties"]) >= {"url", "prompt", "format", "timeout"}
    assert tools["WebFetch"]["required"] == ["url"]
    assert set(tools["Agent"]["properties"]) >= {"subagent_type", "task_id", "command"}
    assert tools["Skill"]["properties"].keys() == {"name"}
    assert sorted(result.registered) == TOOLS


def test_history_in_a_payload_is_replayed_in_wire_form() -> None:
    body = {
        **REQUEST["body"],
        "messages": [
            {"role": "user", "content": "Fix it."},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "edit",
                        "input": {"filePath": "/a", "oldString": "1", "newString": "2"},
                    }
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}],
            },
        ],
    }
    out = ENG.outbound(body, env=ENV).payload
    block = out["messages"][1]["content"][0]
    assert (block["name"], block["input"]) == (
        "Edit",
        {"file_path": "/a", "old_string": "1", "new_string": "2"},
    )


@pytest.mark.parametrize(
    ("model", "env", "open_"),
    [
        ("claude-sonnet-4-5", {}, True),
        ("gpt-5", {}, False),
        ("gpt-5", {"BRIDGE_RULES_OPENCODE_FORCE": "1"}, True),
        ("claude-sonnet-4-5", {"BRIDGE_RULES_OPENCODE_DISABLE": "1"}, False),
    ],
)
def test_gate(model: str, env: dict[str, str], open_: bool) -> None:
    assert ENG.gate({"api": "anthropic-messages", "id": model}, env) is open_
