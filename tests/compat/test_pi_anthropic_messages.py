"""Parity of `bridge_rules.compat.pi_anthropic_messages` with the seed's exported API.

Every export the seed's README lists has a counterpart, and each answers the seed's own
documented examples (its README and its smoke tests, as the project's peer notes record
them): the constant tables, outbound names, the reverse map and its lookup, the in-place
rename of pi's toolCall blocks, the gate and transformPayload.
"""

from __future__ import annotations

import copy
import json
import stat
from pathlib import Path
from typing import Any

import pytest
from tests.core.test_profiles import PAM_OUTBOUND

import bridge_rules
from bridge_rules.compat import pi_anthropic_messages as pam
from bridge_rules.compat.tables import canonical_names, stage, stages

# The seed README's "Exported API" list, and the name each has here.
EXPORTS = {
    "CC_CANONICAL_NAMES": "CC_CANONICAL_NAMES",
    "PI_TO_CC_CANONICAL": "PI_TO_CC_CANONICAL",
    "NATIVE_ALIASES": "NATIVE_ALIASES",
    "FLAT_TO_MCP": "FLAT_TO_MCP",
    "DEFAULT_MCP_PREFIX": "DEFAULT_MCP_PREFIX",
    "resolveOutboundName": "resolve_outbound_name",
    "transformPayload": "transform_payload",
    "buildReverseMap": "build_reverse_map",
    "lookupReverse": "lookup_reverse",
    "renameToolCallsInPlace": "rename_tool_calls_in_place",
    "isClaudeAnthropicMessages": "is_claude_anthropic_messages",
}

# core-tools.ts, in code order (37 names).
CC_CANONICAL = [
    "Read", "Write", "Edit", "Bash", "Grep", "Glob", "Agent", "Task", "TaskOutput",
    "TaskCreate", "TaskGet", "TaskList", "TaskUpdate", "TaskStop", "AskUserQuestion",
    "EnterPlanMode", "ExitPlanMode", "KillShell", "TodoWrite", "Skill", "WebFetch", "WebSearch",
    "NotebookEdit", "CronCreate", "CronDelete", "CronList", "EnterWorktree", "ExitWorktree",
    "LSP", "Monitor", "PowerShell", "ListMcpResourcesTool", "ReadMcpResourceTool",
    "SendMessage", "TeamCreate", "TeamDelete", "ToolSearch",
]  # fmt: skip
FLAT = {
    "web_search_exa": "mcp__exa__web_search",
    "get_code_context_exa": "mcp__exa__get_code_context",
    "firecrawl_scrape": "mcp__firecrawl__scrape",
    "firecrawl_map": "mcp__firecrawl__map",
    "firecrawl_search": "mcp__firecrawl__search",
    "generate_image": "mcp__antigravity__generate_image",
    "image_quota": "mcp__antigravity__image_quota",
}
AM = "anthropic-messages"


def test_every_export_has_a_documented_counterpart() -> None:
    for seed, ours in EXPORTS.items():
        assert ours in pam.__all__, seed
        value = getattr(pam, ours)
        if callable(value):
            assert f"``{seed}``" in (value.__doc__ or ""), seed


def test_the_constants() -> None:
    assert list(pam.CC_CANONICAL_NAMES) == CC_CANONICAL
    assert "read" not in pam.CC_CANONICAL_NAMES
    assert pam.PI_TO_CC_CANONICAL == {
        "read": "Read",
        "write": "Write",
        "bash": "Bash",
        "grep": "Grep",
    }
    assert "edit" not in pam.PI_TO_CC_CANONICAL  # deliberately: pi's edit schema differs
    assert pam.NATIVE_ALIASES == {}
    assert pam.FLAT_TO_MCP == FLAT
    assert pam.DEFAULT_MCP_PREFIX == "mcp__pi__"


@pytest.mark.parametrize(
    ("local", "wire"),
    [
        *PAM_OUTBOUND,  # the seed's smoke tests, as the profile tests have them
        ("my_tool", "mcp__pi__my_tool"),  # the README's "for package authors" example
    ],
)
def test_resolve_outbound_name(local: str, wire: str) -> None:
    assert pam.resolve_outbound_name(local) == wire


REGISTERED = ["read", "bash", "web_search", "Agent", "AskUserQuestion", "browser"]


def test_build_reverse_map_entries() -> None:
    rmap = pam.build_reverse_map(REGISTERED)
    assert rmap["Read"] == "read"
    assert rmap["Write"] == "write"  # the capitalisation inverse is unconditional
    assert rmap["mcp__pi__web_search"] == "web_search"
    assert rmap["mcp__exa__web_search"] == "web_search_exa"  # so is the companions'
    assert rmap["mcp__pi__Agent"] == rmap["Agent"] == "Agent"
    assert rmap["read"] == "read"  # each entry also under its lowercase key
    assert "ask_user" not in rmap
    assert "Task" not in rmap


@pytest.mark.parametrize(
    ("wire", "local"),
    [
        ("Read", "read"),
        ("READ", "read"),
        ("Read_ide", "read"),
        ("Bash_ide", "bash"),
        ("mcp__pi__web_search_ide", "web_search"),
        ("mcp__pi__browser_ide", "browser"),
        ("Agent_ide", "Agent"),
        ("AskUserQuestion_ide", "AskUserQuestion"),
        ("Agent", "Agent"),
        ("mcp__exa__web_search", "web_search_exa"),
        ("READ_IDE", None),  # the _ide strip is case-sensitive
        ("Read_ide_ide", None),  # and happens once
        ("Task", None),  # canonical identity only for registered names
        ("ask_user", None),
        ("mcp__other__thing", None),
    ],
)
def test_lookup_reverse(wire: str, local: str | None) -> None:
    assert pam.lookup_reverse(wire, pam.build_reverse_map(REGISTERED)) == local


def test_no_clobber_between_read_and_Read() -> None:
    assert pam.lookup_reverse("Read", pam.build_reverse_map(["read"])) == "read"
    assert pam.lookup_reverse("Read", pam.build_reverse_map(["Read"])) == "Read"


def tool_calls(*names: str) -> dict[str, Any]:
    blocks = [
        {"type": "toolCall", "id": f"c{i}", "name": n, "arguments": {}} for i, n in enumerate(names)
    ]
    return {"role": "assistant", "content": [{"type": "text", "text": "ok"}, *blocks]}


def test_rename_tool_calls_in_place() -> None:
    rmap = pam.build_reverse_map(REGISTERED)
    message = tool_calls("mcp__pi__web_search", "Read", "Agent_ide")
    assert pam.rename_tool_calls_in_place(message, rmap) is True
    assert [b.get("name") for b in message["content"]] == [None, "web_search", "read", "Agent"]
    untouched = tool_calls("Unknown", "read")
    assert pam.rename_tool_calls_in_place(untouched, rmap) is False
    assert untouched == tool_calls("Unknown", "read")


@pytest.mark.parametrize(
    ("model", "env", "open_"),
    [
        ({"api": AM, "id": "claude-sonnet-4-5"}, {}, True),
        ({"api": AM, "id": "glm-5"}, {}, True),  # the id does not matter since 0.3.0
        ({"api": AM}, {}, True),
        ({"api": "openai-completions", "id": "claude-x"}, {}, False),
        ({"api": "google-generative-ai", "id": "gemini"}, {}, False),
        (None, {}, False),
        ({}, {}, False),
        ({"api": "openai-completions"}, {"PI_ANTHROPIC_MESSAGES_FORCE_CANONICAL": "1"}, True),
        (None, {"PI_ANTHROPIC_MESSAGES_FORCE_CANONICAL": "1"}, True),
        ({"api": AM}, {"PI_ANTHROPIC_MESSAGES_DISABLE_CANONICAL": "1"}, False),
        ({"api": AM}, {"PI_ANTHROPIC_MESSAGES_DISABLE_CANONICAL": "true"}, True),
    ],
)
def test_gate(model: dict[str, str] | None, env: dict[str, str], open_: bool) -> None:
    assert pam.is_anthropic_messages_gated(model, env) is open_
    assert pam.is_claude_anthropic_messages is pam.is_anthropic_messages_gated


PAYLOAD = {
    "model": "claude-sonnet-4-5",
    "system": [
        {
            "type": "text",
            "text": "You are pi itself; see pi packages.",
            "cache_control": {"type": "ephemeral"},
        }
    ],
    "tools": [
        {"name": n, "input_schema": {"type": "object"}}
        for n in [
            "read",
            "write",
            "edit",
            "bash",
            "grep",
            "find",
            "ask_user",
            "Agent",
            "web_search_exa",
        ]
    ],
    "tool_choice": {"type": "tool", "name": "ask_user"},
    "messages": [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "read", "input": {"path": "a"}}],
        },
    ],
}


def test_transform_payload() -> None:
    before = copy.deepcopy(PAYLOAD)
    out, name_map = pam.transform_payload(PAYLOAD, env={})
    assert before == PAYLOAD  # the input is not mutated
    assert [t["name"] for t in out["tools"]] == [
        "Read", "Write", "mcp__pi__edit", "Bash", "Grep", "mcp__pi__find",
        "mcp__pi__ask_user", "Agent", "mcp__exa__web_search",
    ]  # fmt: skip
    assert name_map["read"] == "Read"
    assert name_map["ask_user"] == "mcp__pi__ask_user"
    assert "Agent" not in name_map  # unchanged names are not recorded
    assert out["tool_choice"]["name"] == "mcp__pi__ask_user"
    assert out["messages"][1]["content"][0]["name"] == "Read"
    assert out["system"][0]["text"] == "You are the cli itself; see cli packages."
    assert out["system"][0]["cache_control"] == {"type": "ephemeral"}
    again, renamed = pam.transform_payload(out, env={})
    assert [t["name"] for t in again["tools"]] == [t["name"] for t in out["tools"]]
    assert renamed == {}  # idempotent on names it already wrote


def test_debug_log_from_the_environment(tmp_path: Path) -> None:
    path = tmp_path / "pi-am.log"
    env = {"PI_ANTHROPIC_MESSAGES_DEBUG_LOG": str(path)}
    pam.transform_payload(PAYLOAD, env=env)
    message = tool_calls("mcp__pi__web_search")
    pam.rename_tool_calls_in_place(message, pam.build_reverse_map(REGISTERED), env=env)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    outbound, renamed = (json.loads(line) for line in path.read_text().splitlines())
    assert outbound["event"] == "outbound"
    assert outbound["before"]["tools"][0]["name"] == "read"
    assert outbound["after"]["tools"][0]["name"] == "Read"
    assert "pi itself" not in path.read_text()  # prompt text is omitted
    assert renamed == {"event": "inbound_rename", "from": "mcp__pi__web_search", "to": "web_search"}
    assert pam.debug_log(env={"PI_ANTHROPIC_MESSAGES_DEBUG_LOG": ""}) is None
    assert pam.debug_log(env={}) is None


def test_tables_for_any_rules() -> None:
    """The generic part: each stage's table, a pin's canonical names."""
    ids = [s.id for s in stages(pam.engine())]
    assert ids == [
        "cc-canonical-names", "already-mcp", "native-aliases", "flat-to-mcp",
        "pi-to-cc-canonical", "default-mcp-prefix",
    ]  # fmt: skip
    assert stage(pam.engine(), "already-mcp").prefix == "mcp__"
    with pytest.raises(KeyError, match="did you mean 'flat-to-mcp'"):
        stage(pam.engine(), "flat-to-mpc")
    names = canonical_names("claude-code@2.1.330")
    assert "Skill" in names
    assert "propose_skills" not in names
    assert "propose_skills" in canonical_names("claude-code@2.1.330", include_declared=True)
    default = bridge_rules.load()
    assert pam.resolve_outbound_name("find", rules=default) == "Glob"
    assert pam.lookup_reverse("Glob", pam.build_reverse_map(["find"], rules=default)) == "find"
