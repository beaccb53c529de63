"""``policy:``: denied tools leave ``tools[]``, a forced one is refused, a call to one in an
answer is handled by ``on_denied``, and a request's switches only narrow."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import bridge_rules
from bridge_rules.engine import Engine
from bridge_rules.policy import PolicyError
from bridge_rules.transform.unmapped import DENIED

TOOLS = ["read", "write", "edit", "bash", "mcp__terminal__run", "mcp__exa__search"]


def engine(tmp_path: Path, policy: str) -> Engine:
    rules = tmp_path / "rules.yaml"
    rules.write_text("bridge-rules: 1\nextends: default\nlocal_pin: pi@0.73.1\npolicy:\n" + policy)
    return bridge_rules.load(str(rules))


def body(*tools: str, choice: dict[str, Any] | None = None) -> bytes:
    payload: dict[str, Any] = {
        "model": "claude-sonnet-4-5",
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"name": t, "input_schema": {"type": "object"}} for t in tools],
    }
    if choice is not None:
        payload["tool_choice"] = choice
    return json.dumps(payload).encode()


def sent(e: Engine, *tools: str, **kw: Any) -> list[str]:
    turn = e.turn(body(*tools), **kw)
    return [t["name"] for t in json.loads(turn.body)["tools"]]


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("  switches: [read_only]\n", ["Read", "Bash", "mcp__terminal__run", "mcp__exa__search"]),
        (
            "  switches: [no_exec, no_web]\n",
            ["Read", "Write", "Edit", "mcp__terminal__run", "mcp__exa__search"],
        ),
        ("  deny: ['mcp__terminal__*', write]\n", ["Read", "Edit", "Bash", "mcp__exa__search"]),
        ("  allow: [read, 'Bash']\n", ["Read", "Bash"]),
        (
            "  allow: ['*']\n  deny: [Bash]\n",
            ["Read", "Write", "Edit", "mcp__terminal__run", "mcp__exa__search"],
        ),
        ("  trusted_servers: [exa]\n", ["Read", "Write", "Edit", "Bash", "mcp__exa__search"]),
    ],
)
def test_denied_tools_leave_tools(tmp_path: Path, policy: str, expected: list[str]) -> None:
    assert sent(engine(tmp_path, policy), *TOOLS) == expected


def test_a_forced_denied_tool_is_refused_naming_tool_and_rule(tmp_path: Path) -> None:
    e = engine(tmp_path, "  switches: [read_only]\n")
    turn = e.turn(body(*TOOLS, choice={"type": "tool", "name": "write"}))
    assert turn.rejected is not None
    assert "'write'" in turn.rejected
    assert "policy.switches.read_only 'Write'" in turn.rejected
    assert e.turn(body(*TOOLS, choice={"type": "tool", "name": "read"})).rejected is None


def answer() -> dict[str, Any]:
    return {
        "type": "message",
        "role": "assistant",
        "stop_reason": "tool_use",
        "content": [
            {"type": "text", "text": "writing"},
            {"type": "tool_use", "id": "toolu_1", "name": "Write", "input": {"file_path": "x"}},
        ],
    }


def test_on_denied_text_explains_the_call(tmp_path: Path) -> None:
    e = engine(tmp_path, "  switches: [read_only]\n")
    before = DENIED.total
    turn = e.turn(body(*TOOLS))
    out = turn.message(answer())
    assert [b["type"] for b in out["content"]] == ["text", "text"]
    assert "denies" in out["content"][1]["text"]
    assert out["stop_reason"] == "end_turn"
    assert [d.name for d in turn.report.denied] == ["Write"]
    assert DENIED.total == before + 1


def test_on_denied_drop_removes_the_call(tmp_path: Path) -> None:
    e = engine(tmp_path, "  switches: [read_only]\n  on_denied: drop\n")
    out = e.turn(body(*TOOLS)).message(answer())
    assert out["content"] == [{"type": "text", "text": "writing"}]
    assert out["stop_reason"] == "end_turn"


def test_on_denied_error_refuses_the_answer(tmp_path: Path) -> None:
    e = engine(tmp_path, "  switches: [read_only]\n  on_denied: error\n")
    turn = e.turn(body(*TOOLS))
    out = turn.message(answer())
    assert out["type"] == "error"
    assert out["error"]["type"] == "permission_error"
    assert turn.report.refusal is not None


def sse(*events: dict[str, Any]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


STREAM = sse(
    {"type": "message_start", "message": {"id": "m", "content": []}},
    {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "tool_use", "id": "t1", "name": "Write", "input": {}},
    },
    {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "input_json_delta", "partial_json": "{}"},
    },
    {"type": "content_block_stop", "index": 0},
    {
        "type": "content_block_start",
        "index": 1,
        "content_block": {"type": "tool_use", "id": "t2", "name": "Read", "input": {}},
    },
    {"type": "content_block_stop", "index": 1},
    {"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
    {"type": "message_stop"},
)


def events(raw: bytes) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in raw.splitlines() if line.startswith(b"data: ")]


@pytest.mark.parametrize("split", [1, 7, len(STREAM)])
def test_streams_drop_and_renumber(tmp_path: Path, split: int) -> None:
    e = engine(tmp_path, "  switches: [read_only]\n  on_denied: drop\n")
    turn = e.turn(body(*TOOLS))
    chunks = [STREAM[i : i + split] for i in range(0, len(STREAM), split)]
    out = events(b"".join(turn.stream(chunks)))
    starts = [x for x in out if x["type"] == "content_block_start"]
    assert [(s["index"], s["content_block"]["name"]) for s in starts] == [(0, "read")]
    assert [d.name for d in turn.report.denied] == ["Write"]


def test_streams_error_ends_with_an_error_event(tmp_path: Path) -> None:
    e = engine(tmp_path, "  switches: [read_only]\n  on_denied: error\n")
    out = events(b"".join(e.turn(body(*TOOLS)).stream([STREAM])))
    assert [x["type"] for x in out] == ["message_start", "error"]


def test_streams_text_turns_the_call_into_text(tmp_path: Path) -> None:
    e = engine(tmp_path, "  switches: [read_only]\n")
    out = events(b"".join(e.turn(body(*TOOLS)).stream([STREAM])))
    blocks = [x["content_block"]["type"] for x in out if x["type"] == "content_block_start"]
    assert blocks == ["text", "tool_use"]


def test_a_request_narrows_but_never_widens(tmp_path: Path) -> None:
    e = engine(tmp_path, "  deny: [bash]\n")
    assert sent(e, *TOOLS, policy=("read_only",)) == [
        "Read",
        "mcp__terminal__run",
        "mcp__exa__search",
    ]
    assert "Bash" not in sent(e, *TOOLS, policy=("no_web",))
    assert sent(e, *TOOLS) == ["Read", "Write", "Edit", "mcp__terminal__run", "mcp__exa__search"]
    narrowed = e.turn(body(*TOOLS), policy=("read_only",))
    assert narrowed.message(answer())["content"][1]["type"] == "text"
    assert e.turn(body(*TOOLS)).message(answer())["content"][1]["name"] == "write"
    with pytest.raises(PolicyError, match="unknown policy switch admin"):
        e.turn(body(*TOOLS), policy=("admin",))


def test_a_set_of_switches_is_compiled_once_whatever_its_order(tmp_path: Path) -> None:
    rt = engine(tmp_path, "  deny: [bash]\n").runtime
    both = rt.narrowed(("read_only", "no_web"))
    assert both.policy.switches == ("no_web", "read_only")
    assert rt.narrowed(("no_web", "read_only", "no_web")) is both
    assert rt.narrowed(("read_only",)) is rt.narrowed(("read_only", "read_only"))
    assert rt.narrowed(()) is rt
    with pytest.raises(PolicyError, match="unknown policy switch admin"):
        rt.narrowed(("admin", "read_only"))
    assert len(rt._narrowed) == 3  # a refused set is not kept


def test_a_switch_that_is_not_a_name_is_a_type_error(tmp_path: Path) -> None:
    e = engine(tmp_path, "  deny: [bash]\n")
    with pytest.raises(TypeError, match="policy switch must be a str, not int"):
        e.turn(body(*TOOLS), policy=("read_only", 3))  # type: ignore[arg-type]


def test_explain_names_the_rule_and_its_place(tmp_path: Path) -> None:
    e = engine(tmp_path, "  deny: [write]\n")
    section = e.explain("write").to_dict()["policy"]
    assert section["allowed"] is False
    assert section["rule"]["pattern"] == "write"
    assert section["rule"]["at"]["line"] == 5
    assert e.explain("read").to_dict()["policy"]["allowed"] is True


@pytest.mark.parametrize(
    ("switch", "tool"),
    [
        ("no_web", {"type": "web_search_20250305", "name": "web_search", "max_uses": 3}),
        ("no_web", {"type": "web_fetch_20250910", "name": "web_fetch"}),
        ("no_exec", {"type": "code_execution_20250825", "name": "code_execution"}),
        ("no_exec", {"type": "bash_20250124", "name": "bash"}),
        ("read_only", {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"}),
    ],
)
def test_a_switch_also_denies_the_server_tools_that_do_the_same(
    tmp_path: Path, switch: str, tool: dict[str, Any]
) -> None:
    e = engine(tmp_path, f"  switches: [{switch}]\n")
    payload = json.loads(body("read"))
    payload["tools"].append(tool)
    names = [t["name"] for t in json.loads(e.turn(json.dumps(payload).encode()).body)["tools"]]
    assert tool["name"] not in names
    assert "Read" in names
