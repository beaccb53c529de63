"""The plan of a CLI run, from a wire request: which tool goes where under which name,
what is replayed, and what reaches the child's environment. Pure data, no CLI."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bridge_rules.proxy.claude_code.plan import PlanError, cli_name, plan
from bridge_rules.proxy.claude_code.process import FIXED_ENV, child_env


def tool(name: str, **extra: Any) -> dict[str, Any]:
    schema = {"type": "object", "properties": {"p": {"type": "string"}}, "required": ["p"]}
    return {"name": name, "description": f"the {name} tool", "input_schema": schema, **extra}


@pytest.mark.parametrize(
    ("wire", "expected"),
    [
        ("Read", ("Read", None, "Read")),
        ("WebSearch", ("WebSearch", None, "WebSearch")),
        ("mcp__pi__ls", ("mcp__pi__ls", "pi", "ls")),
        ("mcp__a__b__c", ("mcp__a__b__c", "a", "b__c")),
        ("todowrite", ("mcp__bridge__todowrite", "bridge", "todowrite")),
        ("TodoWrite", ("mcp__bridge__TodoWrite", "bridge", "TodoWrite")),  # not in 2.1.332
    ],
)
def test_each_wire_name_has_one_place(wire: str, expected: tuple[str, str | None, str]) -> None:
    assert cli_name(wire) == expected


def test_builtins_go_to_tools_and_the_rest_to_mcp_servers_with_their_schemas() -> None:
    body = {
        "model": "claude-sonnet-4-6",
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [
            tool("Read"),
            tool("mcp__pi__ls"),
            tool("todo"),
            {"type": "web_search_20250305", "name": "web_search"},
        ],
    }
    got = plan(body)
    assert got.builtins == ["Read"]
    assert {s: [(t.name, t.schema) for t in ts] for s, ts in got.servers.items()} == {
        "pi": [("ls", tool("x")["input_schema"])],
        "bridge": [("todo", tool("x")["input_schema"])],
    }
    assert got.wire_name("mcp__bridge__todo") == "todo"
    assert got.wire_name("mcp__pi__ls") == "mcp__pi__ls"
    assert got.wire_name("Read") == "Read"


def test_the_history_is_replayed_message_by_message_and_only_the_last_asks() -> None:
    body = {
        "system": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}],
        "tools": [tool("todo")],
        "messages": [
            {"role": "user", "content": "start"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "todo", "input": {}}],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1"}]},
        ],
    }
    got = plan(body)
    assert got.system == "one\n\ntwo"
    assert [(line["type"], line.get("shouldQuery")) for line in got.lines] == [
        ("user", False),
        ("assistant", None),
        ("user", None),
    ]
    # the model sees the call under the name it is offered, the result as it was
    assert got.lines[1]["message"]["content"][0]["name"] == "mcp__bridge__todo"
    assert got.lines[2]["message"]["content"] == body["messages"][2]["content"]  # type: ignore[index]


@pytest.mark.parametrize(
    ("messages", "says"),
    [
        ([], "non-empty"),
        ([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}], "ends with"),
        ([{"role": "system", "content": "a"}, {"role": "user", "content": "b"}], "messages[0]"),
    ],
)
def test_a_conversation_the_cli_cannot_take_is_refused(messages: Any, says: str) -> None:
    with pytest.raises(PlanError, match=says.replace("[", r"\[")):
        plan({"messages": messages})


def test_sampling_reaches_the_child_through_its_environment_only() -> None:
    body = {
        "messages": [{"role": "user", "content": "hi"}],
        "max_tokens": 300,
        "temperature": 0.2,
        "top_p": 0.9,
        "stop_sequences": ["END"],
        "thinking": {"type": "enabled", "budget_tokens": 1024},
    }
    got = plan(body)
    assert got.env["CLAUDE_CODE_MAX_OUTPUT_TOKENS"] == "300"
    assert json.loads(got.env["CLAUDE_CODE_EXTRA_BODY"]) == {
        "temperature": 0.2,
        "top_p": 0.9,
        "stop_sequences": ["END"],
        "thinking": {"type": "enabled", "budget_tokens": 1024},
    }
    assert plan({"messages": body["messages"]}).env == {}


@pytest.mark.parametrize(
    ("choice", "sent"),
    [
        (
            {"type": "tool", "name": "search_docs"},
            {"type": "tool", "name": "mcp__bridge__search_docs"},
        ),
        ({"type": "tool", "name": "Read"}, {"type": "tool", "name": "Read"}),
        ({"type": "tool", "name": "mcp__pi__ls"}, {"type": "tool", "name": "mcp__pi__ls"}),
        ({"type": "tool", "name": "nowhere"}, {"type": "tool", "name": "nowhere"}),
        ({"type": "any", "disable_parallel_tool_use": True}, None),
        ("auto", None),  # not a shape the API takes: the endpoint says so, as over HTTP
    ],
)
def test_tool_choice_names_the_tool_as_the_cli_offers_it(choice: Any, sent: Any) -> None:
    body = {
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [
            {"name": n, "input_schema": {"type": "object"}}
            for n in ("search_docs", "Read", "mcp__pi__ls")
        ],
        "tool_choice": choice,
        "metadata": {"user_id": "user-7"},
    }
    extra = json.loads(plan(body).env["CLAUDE_CODE_EXTRA_BODY"])
    assert extra == {"tool_choice": choice if sent is None else sent, "metadata": body["metadata"]}


def test_the_child_gets_the_listed_variables_and_nothing_else() -> None:
    environ = {
        "ANTHROPIC_API_KEY": "sk-1",
        "PATH": "/bin",
        "HOME": "/root",
        "BRIDGE_RULES_SEAL_KEY": "secret",
        "GITHUB_TOKEN": "ghp",
    }
    env = child_env(environ, "/scratch", {"CLAUDE_CODE_MAX_OUTPUT_TOKENS": "5"})
    assert env == {
        "ANTHROPIC_API_KEY": "sk-1",
        "PATH": "/bin",
        "HOME": "/scratch/home",
        "TMPDIR": "/scratch/tmp",
        **FIXED_ENV,
        "CLAUDE_CODE_MAX_OUTPUT_TOKENS": "5",
    }


def test_an_mcp_name_is_split_as_the_cli_reads_it_at_its_first_separator() -> None:
    """``cli_name`` reads MCP names through ``bridge_rules.mcpnames``; the reference is the
    CLI's own reading, a lazy regex split at the first ``__`` after ``mcp__``."""
    import re

    from hypothesis import given, settings
    from hypothesis import strategies as st
    from tests.budget import examples

    reference = re.compile(r"^mcp__([A-Za-z0-9_-]+?)__([A-Za-z0-9_-]+)$")

    @settings(max_examples=examples(400), deadline=None)
    @given(st.text("ab_-.", max_size=12))
    def check(rest: str) -> None:
        wire = "mcp__" + rest
        found = reference.match(wire)
        expected = (wire, found[1], found[2]) if found else ("mcp__bridge__" + wire, "bridge", wire)
        assert cli_name(wire) == expected

    check()
