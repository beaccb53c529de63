"""Wire names the API would refuse, caught at run time; tool_reference renamed both ways."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from tests.transform.conftest import write_rules

from bridge_rules.engine import Engine
from bridge_rules.wirenames import is_valid, shorten

LONG = "get_the_very_long_subagent_result_with_all_details_please_and_more"  # 66
MODEL = "claude-sonnet-4-5"


def tool(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "input_schema": {"type": "object"}, **extra}


def request(*tools: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"model": MODEL, "tools": list(tools), "messages": [], **extra}


def test_invalid_names_reject_the_request_naming_the_tool(eng: Engine) -> None:
    result = eng.outbound(request(tool("read"), tool(LONG), tool("a.b")), env={})
    assert result.rejected is not None
    assert f"tool '{LONG}' (sent as 'mcp__pi__{LONG}') is 75 characters long" in result.rejected
    assert "tool 'a.b' (sent as 'mcp__pi__a.b') contains '.'" in result.rejected


def test_valid_requests_are_not_rejected(eng: Engine) -> None:
    assert eng.outbound(request(tool("read"), tool("my_tool")), env={}).rejected is None


def test_typed_tools_keep_their_reserved_names(eng: Engine) -> None:
    typed = {"type": "web_search_20250305", "name": "web_search"}
    assert eng.outbound(request(typed), env={}).rejected is None


@pytest.fixture(scope="module")
def shortening(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    return write_rules(tmp_path_factory.mktemp("s"), "wire_names:\n  on_invalid: shorten\n")


def test_shorten_sends_a_valid_name_that_maps_back(shortening: Engine) -> None:
    sent = shortening.outbound(request(tool(LONG), tool("a/b")), env={})
    assert sent.rejected is None
    wires = [t["name"] for t in sent.payload["tools"]]
    assert all(is_valid(w) for w in wires)
    assert wires[0].startswith("mcp__pi__get_the_very_long")
    assert len(wires[0]) == 64
    for local, wire in zip([LONG, "a/b"], wires, strict=True):
        assert shortening.inbound_name(wire, sent.registered) == local
    answer = {"content": [{"type": "tool_use", "id": "t", "name": wires[1], "input": {}}]}
    assert shortening.inbound(answer, sent.registered)["content"][0]["name"] == "a/b"
    again = shortening.outbound(request(tool(LONG), tool("a/b")), env={})
    assert [t["name"] for t in again.payload["tools"]] == wires  # deterministic


def test_shorten_keeps_distinct_names_distinct() -> None:
    assert shorten("a.b") != shorten("a_b")
    assert shorten("a_b") == "a_b"
    assert len(shorten("x" * 100, 20)) == 20
    assert is_valid(shorten("", 64))


def test_explain_shows_the_shortening(shortening: Engine) -> None:
    text = shortening.explain(LONG, [LONG]).render_text()
    assert "wire_names (guard)" in text
    assert "shortened to" in text
    assert f"{shortening.outbound_name(LONG)}: maps back" in text


def test_the_limit_is_configurable(tmp_path: Path) -> None:
    rules = write_rules(tmp_path, "wire_names:\n  max_length: 20\n")
    result = rules.outbound(request(tool("twenty_one_chars_xx")), env={})
    assert result.rejected is not None
    assert "(the rules allow at most 20)" in result.rejected


def test_pass_sends_invalid_names(tmp_path: Path) -> None:
    rules = write_rules(tmp_path, "wire_names:\n  on_invalid: pass\n")
    assert rules.outbound(request(tool(LONG)), env={}).rejected is None


def test_two_tools_under_one_wire_name(eng: Engine) -> None:
    result = eng.outbound(request(tool("web_search"), tool("WebSearch")), env={})
    assert result.rejected is not None
    assert "tools 'web_search' and 'WebSearch' would both be sent as 'WebSearch'" in result.rejected


def test_on_collision_first_keeps_the_first(tmp_path: Path) -> None:
    rules = write_rules(tmp_path, "wire_names:\n  on_collision: first\n")
    result = rules.outbound(request(tool("web_search"), tool("WebSearch")), env={})
    assert result.rejected is None
    assert [t["name"] for t in result.payload["tools"]] == ["WebSearch"]
    assert result.dropped == ["WebSearch"]
    assert result.registered == ["web_search"]
    assert rules.inbound_name("WebSearch", result.registered) == "web_search"


REFERENCE_RESULT = {
    "type": "tool_result",
    "tool_use_id": "toolu_s",
    "content": [{"type": "tool_reference", "tool_name": "read"}, {"type": "text", "text": "x"}],
}


def test_tool_reference_goes_out_under_the_wire_name(eng: Engine) -> None:
    payload = request(
        tool("read", defer_loading=True),
        tool("my_tool", defer_loading=True),
        messages=[{"role": "user", "content": [REFERENCE_RESULT]}],
    )
    before = orjson.dumps(payload)
    sent = eng.outbound(payload, env={}).payload
    assert orjson.dumps(payload) == before
    refs = sent["messages"][0]["content"][0]["content"]
    assert refs[0] == {"type": "tool_reference", "tool_name": "Read"}
    assert refs[1] == {"type": "text", "text": "x"}


def test_a_reference_to_a_typed_tool_keeps_its_reserved_name(eng: Engine) -> None:
    typed = {"type": "bash_20250124", "name": "bash"}
    result = {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": [
            {"type": "tool_reference", "tool_name": "bash"},
            {"type": "tool_reference", "tool_name": "read"},
        ],
    }
    payload = request(
        typed,
        tool("read", defer_loading=True),
        messages=[{"role": "user", "content": [result]}],
    )
    sent = eng.outbound(payload, env={}).payload
    assert sent["tools"][0]["name"] == "bash"  # typed tools go out as they are...
    refs = sent["messages"][0]["content"][0]["content"]
    assert [r["tool_name"] for r in refs] == ["bash", "Read"]  # ... and so do references to them


def test_tool_reference_comes_back_under_the_local_name(eng: Engine) -> None:
    block = {
        "type": "tool_search_tool_result",
        "tool_use_id": "srvtoolu_1",
        "content": {
            "type": "tool_search_tool_search_result",
            "tool_references": [
                {"type": "tool_reference", "tool_name": "mcp__pi__my_tool"},
                {"type": "tool_reference", "tool_name": "Unknown"},
            ],
        },
    }
    registered = ["read", "my_tool"]
    out = eng.inbound({"content": [block]}, registered)
    names = [r["tool_name"] for r in out["content"][0]["content"]["tool_references"]]
    assert names == ["my_tool", "Unknown"]
    start = {"type": "content_block_start", "index": 0, "content_block": block}
    stream = b"event: content_block_start\ndata: " + orjson.dumps(start) + b"\n\n"
    rewritten = b"".join(eng.inbound_stream([stream], registered))
    data = orjson.loads(rewritten.split(b"data: ", 1)[1])
    assert data["content_block"] == out["content"][0]


def test_shorten_meets_the_targets_own_name_rule(tmp_path: Path) -> None:
    rules = (
        "schemas: {target: gemini}\nwire_names:\n  on_invalid: shorten\n"
        "names:\n  - kind: passthrough\n    id: mine\n    names: [1st, -x, ok_1]\n"
    )
    eng = write_rules(tmp_path, rules)
    sent = eng.outbound(request(tool("1st"), tool("-x"), tool("ok_1")), env={})
    wires = [t["name"] for t in sent.payload["tools"]]
    assert sent.rejected is None
    assert wires[2] == "ok_1"  # Gemini takes it: unchanged
    for wire, local in zip(wires[:2], ("1st", "-x"), strict=True):
        assert wire.startswith("_")
        assert wire != "_" + local  # the hash is there: it never meets a tool named _1st
        assert wire == shorten(local, letter_first=True)
        assert eng.inbound_name(wire, sent.registered) == local
    # The same rules for the Anthropic API send both names as they are: it takes them.
    anthropic = write_rules(tmp_path, rules.replace("gemini", "anthropic"))
    sent = anthropic.outbound(request(tool("1st"), tool("-x")), env={})
    assert [t["name"] for t in sent.payload["tools"]] == ["1st", "-x"]


def test_letter_first_shortening_is_valid_at_any_limit() -> None:
    for limit in (1, 5, 9, 10, 64):
        for name in ("1st", "-", "", "9" * 100, "a.b", "ok"):
            short = shorten(name, limit, letter_first=True)
            assert is_valid(short, limit), (name, limit)
            assert short[0].isalpha() or short[0] == "_", (name, limit)
    assert shorten("ok", letter_first=True) == "ok"
    assert shorten("1st", letter_first=True) != shorten("_1st", letter_first=True)


def test_explain_judges_the_wire_name_by_the_rules_limit_and_target(tmp_path: Path) -> None:
    long = "long_" + "x" * 22  # 27 characters: valid for the API, over the rules' 20
    rules = (
        "schemas: {target: gemini}\nwire_names:\n  max_length: 20\n"
        f"names:\n  - kind: passthrough\n    id: mine\n    names: [1st, {long}]\n"
    )
    eng = write_rules(tmp_path, rules)
    first = eng.explain("1st", ["1st"])
    assert first.to_dict()["wire_name"]["valid"] is False
    assert "is not accepted by gemini" in first.render_text()
    problems = eng.explain(long, [long]).to_dict()["wire_name"]["problems"]
    assert problems == ["is 27 characters long (the rules allow at most 20)"]
    sent = eng.outbound(request(tool("1st")), env={})
    assert sent.rejected is not None
    assert "is not accepted by gemini" in sent.rejected  # what explain says is why it is refused
