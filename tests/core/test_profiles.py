"""The packaged profiles reproduce their peers, case for case.

Cases come from the peers' own tests and the derived behaviours recorded in
the peers.md reference note (section numbers in the comments).
"""

from __future__ import annotations

import pytest

import bridge_rules
from bridge_rules.engine import Engine


@pytest.fixture(scope="module")
def pam() -> Engine:
    return bridge_rules.load("pi-anthropic-messages")


# --- pi-anthropic-messages 0.3.2 (peers.md §1) --------------------------------
PAM_OUTBOUND = [
    # core canonicalisation; edit deliberately absent
    ("read", "Read"),
    ("write", "Write"),
    ("bash", "Bash"),
    ("grep", "Grep"),
    ("edit", "mcp__pi__edit"),
    # canonical passthrough (exact case)
    ("Read", "Read"),
    ("Bash", "Bash"),
    ("Agent", "Agent"),
    ("AskUserQuestion", "AskUserQuestion"),
    ("WebFetch", "WebFetch"),
    # already MCP
    ("mcp__exa__web_search", "mcp__exa__web_search"),
    ("mcp__pi__foo", "mcp__pi__foo"),
    # FLAT_TO_MCP, compared lowercased
    ("web_search_exa", "mcp__exa__web_search"),
    ("FIRECRAWL_SCRAPE", "mcp__firecrawl__scrape"),
    ("generate_image", "mcp__antigravity__generate_image"),
    # default prefix, original case kept
    ("ask_user", "mcp__pi__ask_user"),
    ("web_search", "mcp__pi__web_search"),
    ("fetch_content", "mcp__pi__fetch_content"),
    ("subagent", "mcp__pi__subagent"),
    ("find", "mcp__pi__find"),
    ("ls", "mcp__pi__ls"),
    ("glob", "mcp__pi__glob"),
    ("browser", "mcp__pi__browser"),
    # derived consequences
    ("READ", "Read"),
    ("agent", "mcp__pi__agent"),
    ("Edit", "Edit"),
    ("MCP__foo__bar", "mcp__pi__MCP__foo__bar"),
]


@pytest.mark.parametrize(("local", "wire"), PAM_OUTBOUND)
def test_pam_outbound(pam: Engine, local: str, wire: str) -> None:
    assert pam.outbound_name(local) == wire


AM = "anthropic-messages"
PAM_GATE = [
    ({"api": AM, "id": "claude-sonnet-4-5"}, {}, True),
    ({"api": AM, "id": "claude-opus-4-1"}, {}, True),
    ({"api": AM, "id": "glm-5"}, {}, True),  # 0.3.0 widened gate: model id ignored
    ({"api": AM, "id": "gemini-3-pro-preview"}, {}, True),
    ({"api": AM, "id": "c4-omega"}, {}, True),
    ({"api": AM}, {}, True),
    ({"api": "openai-completions", "id": "gpt-5"}, {}, False),
    ({"api": "google-generative-ai", "id": "gemini"}, {}, False),
    ({"api": "openai-completions", "id": "claude-sonnet-4-5"}, {}, False),
    (None, {}, False),
    ({}, {}, False),
    ({"api": None}, {}, False),
    ({"api": "openai-completions"}, {"PI_ANTHROPIC_MESSAGES_FORCE_CANONICAL": "1"}, True),
    (None, {"PI_ANTHROPIC_MESSAGES_FORCE_CANONICAL": "1"}, True),
    ({"api": AM, "id": "claude-x"}, {"PI_ANTHROPIC_MESSAGES_DISABLE_CANONICAL": "1"}, False),
    (
        {"api": AM},
        {
            "PI_ANTHROPIC_MESSAGES_DISABLE_CANONICAL": "1",
            "PI_ANTHROPIC_MESSAGES_FORCE_CANONICAL": "1",
        },
        False,
    ),
    ({"api": "openai-completions"}, {"PI_ANTHROPIC_MESSAGES_FORCE_CANONICAL": "true"}, False),
    ({"api": AM}, {"PI_ANTHROPIC_MESSAGES_DISABLE_CANONICAL": "yes"}, True),
]


@pytest.mark.parametrize(("model", "env", "open_"), PAM_GATE)
def test_pam_gate(
    pam: Engine, model: dict[str, str] | None, env: dict[str, str], open_: bool
) -> None:
    assert pam.gate(model, env=env) is open_


CUSTOM = ["read", "bash", "edit", "write", "ask_user", "web_search", "browser"]
PAM_INBOUND = [
    # canonical -> pi, exact and case-insensitive
    ("Read", CUSTOM, "read"),
    ("read", CUSTOM, "read"),
    ("READ", CUSTOM, "read"),
    ("Bash", CUSTOM, "bash"),
    # PI_TO_CC inverse is unconditional
    ("Grep", CUSTOM, "grep"),
    # mcp__pi__ entries for registered names only
    ("mcp__pi__ask_user", CUSTOM, "ask_user"),
    ("mcp__pi__edit", CUSTOM, "edit"),
    ("mcp__pi__unregistered", CUSTOM, None),
    # FLAT inverse is unconditional
    ("mcp__exa__web_search", CUSTOM, "web_search_exa"),
    # _ide strip, canonical and mcp (openspec scenarios included)
    ("Read_ide", CUSTOM, "read"),
    ("Bash_ide", ["bash"], "bash"),
    ("mcp__pi__web_search_ide", CUSTOM, "web_search"),
    ("mcp__pi__browser_ide", CUSTOM, "browser"),
    # genuine misses; the suffix strip is case-sensitive and happens once
    ("unknown_tool", CUSTOM, None),
    ("ask_user", CUSTOM, None),
    ("READ_IDE", CUSTOM, None),
    ("Read_ide_ide", CUSTOM, None),
    # canonical passthrough block: identity entries only for registered canonical names
    ("Agent_ide", ["Agent", "read"], "Agent"),
    ("Agent", ["Agent"], "Agent"),
    ("AskUserQuestion_ide", ["AskUserQuestion"], "AskUserQuestion"),
    ("mcp__pi__Agent", ["Agent"], "Agent"),
    ("Task", ["read", "Agent"], None),
    # no clobber: a registered `Read` keeps `Read`, a registered `read` gets it otherwise
    ("Read", ["Read"], "Read"),
    ("Read", ["read"], "read"),
]


@pytest.mark.parametrize(("wire", "registered", "local"), PAM_INBOUND)
def test_pam_inbound(pam: Engine, wire: str, registered: list[str], local: str | None) -> None:
    assert pam.inbound_name(wire, registered=registered) == local


def test_pam_registered_canonical_wins_over_capitalised_core_tool(pam: Engine) -> None:
    # Both registered: the identity entry is written last and wins (§1.5 loop 5);
    # the two tools would still collide on the wire, so the collision is reported.
    assert pam.inbound_name("Read", registered=["read", "Read"]) == "Read"
    collisions = pam.collisions(["read", "Read"])
    assert any(c.wire == "Read" and set(c.locals) == {"read", "Read"} for c in collisions)


# --- pi-ai OAuth mode (ecosystem.md §0) ---------------------------------------
@pytest.mark.parametrize(
    ("local", "wire"),
    [
        ("read", "Read"),
        ("todowrite", "TodoWrite"),
        ("WEBFETCH", "WebFetch"),
        ("task", "Task"),
        ("find", "find"),
        ("ls", "ls"),
        ("my_tool", "my_tool"),
        ("agent", "agent"),
    ],
)
def test_pi_ai_outbound(local: str, wire: str) -> None:
    assert bridge_rules.load("pi-ai-oauth").outbound_name(local) == wire


@pytest.mark.parametrize(
    ("wire", "registered", "local"),
    [
        ("Read", ["read", "find"], "read"),
        ("read", ["read"], "read"),
        ("READ", ["read"], "read"),
        ("FIND", ["find"], "find"),
        ("Glob", ["find"], None),
        ("Read_ide", ["read"], None),
        ("TodoWrite", ["todowrite"], "todowrite"),
    ],
)
def test_pi_ai_inbound(wire: str, registered: list[str], local: str | None) -> None:
    assert bridge_rules.load("pi-ai-oauth").inbound_name(wire, registered=registered) == local


# --- masonc15/pi-claude-cli (peers.md §4.2) -----------------------------------
CLI_OUT = [
    ("read", "Read"),
    ("write", "Write"),
    ("edit", "Edit"),
    ("bash", "Bash"),
    ("grep", "Grep"),
    ("find", "Glob"),
    ("glob", "Glob"),
    ("ls", "mcp__custom-tools__ls"),
    ("myTool", "mcp__custom-tools__myTool"),
    # pi -> Claude lookup is exact
    ("READ", "mcp__custom-tools__READ"),
]
CLI_IN = [
    ("Read", "read"),
    ("READ", "read"),
    ("Glob", "find"),
    ("glob", "find"),
    ("Edit", "edit"),
    ("Grep", "grep"),
    ("mcp__custom-tools__myTool", "myTool"),
    ("mcp__custom-tools__deploy", "deploy"),
    ("mcp__custom-tools__", ""),
    ("mcp__custom-tools__Read", "Read"),
    ("mcp__other-server__foo", None),
    ("Read_ide", None),
    ("TodoWrite", None),
]


@pytest.mark.parametrize(("local", "wire"), CLI_OUT)
def test_pi_claude_cli_outbound(local: str, wire: str) -> None:
    assert bridge_rules.load("pi-claude-cli").outbound_name(local) == wire


@pytest.mark.parametrize(("wire", "local"), CLI_IN)
def test_pi_claude_cli_inbound(wire: str, local: str | None) -> None:
    # Claude -> pi is table-driven, not scoped to registered tools.
    assert bridge_rules.load("pi-claude-cli").inbound_name(wire, registered=[]) == local


# --- prateekmedia/claude-agent-sdk-pi (peers.md §3.2, §3.3) -------------------
SDK_OUT = [
    ("read", "Read"),
    ("READ", "Read"),
    ("Find", "Glob"),
    ("glob", "Glob"),
    ("ls", "mcp__custom-tools__ls"),
    ("ask_user", "mcp__custom-tools__ask_user"),
    ("mcp__x__y", "mcp__custom-tools__mcp__x__y"),
]
SDK_IN = [
    ("Read", "read"),
    ("GLOB", "find"),
    ("glob", "find"),
    ("Bash", "bash"),
    ("mcp__custom-tools__ask_user", "ask_user"),
    ("MCP__CUSTOM-TOOLS__X", "X"),
    ("mcp__other__y", None),
    ("TodoWrite", None),
    ("Read_ide", None),
]


@pytest.mark.parametrize(("local", "wire"), SDK_OUT)
def test_claude_agent_sdk_pi_outbound(local: str, wire: str) -> None:
    assert bridge_rules.load("claude-agent-sdk-pi").outbound_name(local) == wire


@pytest.mark.parametrize(("wire", "local"), SDK_IN)
def test_claude_agent_sdk_pi_inbound(wire: str, local: str | None) -> None:
    assert bridge_rules.load("claude-agent-sdk-pi").inbound_name(wire, registered=[]) == local


# --- pi-flows prefix era (peers.md §6.1) --------------------------------------
FLOWS = [
    ("read", "read"),
    ("READ", "READ"),
    ("edit", "edit"),
    ("grep", "grep"),
    ("Task", "Task"),
    ("todowrite", "todowrite"),
    ("find", "find"),  # core since the PR's fix 10 (tests/profiles/test_pi_flows.py)
    ("ls", "ls"),
    ("finish", "mcp__flows__finish"),
    ("ask_user", "mcp__flows__ask_user"),
    ("mcp__s__x", "mcp__s__x"),
    ("MCP__s__x", "mcp__flows__MCP__s__x"),
]


@pytest.mark.parametrize(("local", "wire"), FLOWS)
def test_pi_flows_outbound(local: str, wire: str) -> None:
    assert bridge_rules.load("pi-flows").outbound_name(local) == wire


def test_pi_flows_maps_prefixed_names_back_and_gates_on_api() -> None:
    eng = bridge_rules.load("pi-flows")
    assert eng.inbound_name("mcp__flows__finish", registered=["finish"]) == "finish"
    assert eng.gate({"api": "anthropic-messages", "id": "glm-5"}, env={})
    assert not eng.gate({"api": "openai-responses", "id": "claude-x"}, env={})


# --- the default rules (our recommendation) -----------------------------------
DEFAULT_GATE = [
    ({"api": AM, "id": "claude-sonnet-4-5"}, {}, True),
    ({"api": AM, "id": "Claude-Opus"}, {}, True),
    ({"api": AM, "id": "glm-5"}, {}, False),
    ({"api": AM}, {}, False),
    ({"api": AM, "id": "c4-omega"}, {"PI_ANTHROPIC_MESSAGES_FORCE_CANONICAL": "1"}, True),
    (
        {"api": "openai-completions", "id": "claude-x"},
        {"PI_ANTHROPIC_MESSAGES_FORCE_CANONICAL": "1"},
        False,
    ),
    ({"api": AM, "id": "claude-x"}, {"PI_ANTHROPIC_MESSAGES_DISABLE_CANONICAL": "1"}, False),
]


@pytest.mark.parametrize(("model", "env", "open_"), DEFAULT_GATE)
def test_default_gate(model: dict[str, str], env: dict[str, str], open_: bool) -> None:
    assert bridge_rules.load().gate(model, env=env) is open_


def test_default_rules_use_the_pinned_canonical_set() -> None:
    eng = bridge_rules.load()
    assert eng.outbound_name("TaskGet") == "TaskGet"  # in claude-code@2.1.330
    assert eng.outbound_name("TaskOutput") == "mcp__pi__TaskOutput"  # gone from 2.1.330
    assert eng.inbound_name("Read_ide", registered=["read", "bash"]) == "read"
    assert eng.inbound_name("Nothing", registered=["read"]) is None
