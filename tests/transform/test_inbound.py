"""Non-streaming responses: tool calls back to local names; `<tool_call>` text recovery."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from tests.transform.conftest import adapting, write_rules

from bridge_rules.engine import Engine

REGISTERED = ["read", "bash", "ls", "edit"]


def message(*blocks: dict[str, Any], stop: str = "tool_use") -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "content": list(blocks),
        "stop_reason": stop,
    }


def use(name: str, args: Any = None, id_: str = "toolu_1") -> dict[str, Any]:
    return {"type": "tool_use", "id": id_, "name": name, "input": {} if args is None else args}


@pytest.mark.parametrize(
    ("wire", "local"),
    [
        ("Read", "read"),
        ("Read_ide", "read"),
        ("READ", "read"),
        ("mcp__pi__ls", "ls"),
        ("mcp__pi__ls_ide", "ls"),
        ("Bash", "bash"),
        ("mcp__exa__web_search", "mcp__exa__web_search"),  # not registered: untouched
        ("Unknown", "Unknown"),
    ],
)
def test_names_back_to_local(eng: Engine, wire: str, local: str) -> None:
    out = eng.inbound(message(use(wire, {"path": "a"})), REGISTERED)
    assert out["content"][0]["name"] == local
    assert out["content"][0]["input"] == {"path": "a"}


def test_input_not_mutated_and_untouched_blocks_shared(eng: Engine) -> None:
    text = {"type": "text", "text": "x"}
    server = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
    msg = message(text, server, use("Read_ide"))
    before = copy.deepcopy(msg)
    out = eng.inbound(msg, REGISTERED)
    assert msg == before
    assert out["content"][0] is text
    assert out["content"][1] is server


@pytest.mark.parametrize(
    "value", [None, [], "x", {"content": "text"}, {"content": [None, 3, {"type": "tool_use"}]}]
)
def test_malformed_messages_pass_through(eng: Engine, value: Any) -> None:
    assert eng.inbound(value, REGISTERED) == value


def test_arguments_go_through_the_seam(eng: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    from bridge_rules import load

    engine = adapting(load(), "Read", ("file_path", "path"))
    out = engine.inbound(message(use("Read", {"file_path": "a", "limit": 2})), REGISTERED)
    assert out["content"][0] == use("read", {"path": "a", "limit": 2})


RECOVER = "text:\n  recover_tool_calls: true\n"


def test_tool_call_text_is_left_alone_by_default(eng: Engine) -> None:
    text = 'ok <tool_call>{"name": "read", "arguments": {"path": "a"}}</tool_call>'
    out = eng.inbound(message({"type": "text", "text": text}, stop="end_turn"), REGISTERED)
    assert out["content"] == [{"type": "text", "text": text}]


def test_tool_call_text_recovered_when_switched_on(tmp_path: Path) -> None:
    rules = write_rules(tmp_path, RECOVER)
    text = (
        'Reading.\n<tool_call>{"name": "mcp__pi__ls", "arguments": {"path": "."}}</tool_call>\n'
        '<tool_call>{"name": "Read", "args": "{\\"path\\": \\"a\\"}"}</tool_call>'
    )
    out = rules.inbound(message({"type": "text", "text": text}, stop="end_turn"), REGISTERED)
    blocks = out["content"]
    assert blocks[0] == {"type": "text", "text": "Reading.\n"}
    assert [(b["name"], b["input"]) for b in blocks[1:]] == [
        ("ls", {"path": "."}),
        ("read", {"path": "a"}),
    ]
    assert all(b["type"] == "tool_use" and b["id"].startswith("toolu_br") for b in blocks[1:])
    assert blocks[1]["id"] != blocks[2]["id"]
    assert out["stop_reason"] == "tool_use"
    again = rules.inbound(message({"type": "text", "text": text}, stop="end_turn"), REGISTERED)
    assert again == out  # ids are deterministic


@pytest.mark.parametrize(
    "text",
    [
        "<tool_call>{not json}</tool_call>",
        '<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call>',  # not a registered tool
        '<tool_call>{"arguments": {}}</tool_call>',
        '<tool_call>{"name": "read", "arguments": [1]}</tool_call>',
        '<tool_call>{"name": "read"',
        "plain text mentioning <tool_call> tags",
    ],
)
def test_unrecoverable_text_stays_text(tmp_path: Path, text: str) -> None:
    rules = write_rules(tmp_path, RECOVER)
    out = rules.inbound(message({"type": "text", "text": text}, stop="end_turn"), REGISTERED)
    assert out["content"] == [{"type": "text", "text": text}]
    assert out["stop_reason"] == "end_turn"


def test_whole_object_arguments(tmp_path: Path) -> None:
    rules = write_rules(tmp_path, RECOVER)
    text = '<tool_call>{"name": "bash", "command": "ls"}</tool_call>'
    out = rules.inbound(message({"type": "text", "text": text}, stop="max_tokens"), REGISTERED)
    assert [(b["type"], b.get("name"), b.get("input")) for b in out["content"]] == [
        ("tool_use", "bash", {"command": "ls"})
    ]
    assert out["stop_reason"] == "tool_use"  # a recovered call is a call, even after max_tokens


def test_text_around_a_call_splits_into_blocks(tmp_path: Path) -> None:
    rules = write_rules(tmp_path, RECOVER)
    text = 'A  <tool_call>{"name": "ls", "arguments": {}}</tool_call>\n B'
    out = rules.inbound(message({"type": "text", "text": text}, stop="end_turn"), REGISTERED)
    assert [(b["type"], b.get("text")) for b in out["content"]] == [
        ("text", "A  "),
        ("tool_use", None),
        ("text", "B"),
    ]


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>{"name": "bash", "arguments": {"command": "ls"}}',
        '<tool_call>{"name": "bash", "arguments": {"command": "ls"}}\n</tool_c',
    ],
)
def test_unclosed_tag_with_a_complete_call_is_recovered(tmp_path: Path, text: str) -> None:
    rules = write_rules(tmp_path, RECOVER)
    out = rules.inbound(message({"type": "text", "text": text}, stop="max_tokens"), REGISTERED)
    assert [(b["type"], b.get("name")) for b in out["content"]] == [("tool_use", "bash")]
    assert out["stop_reason"] == "tool_use"
