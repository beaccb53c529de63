"""The way back for names a gateway mangled, and what happens to a name nothing maps back."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import orjson
import pytest
from tests.transform.conftest import write_rules

from bridge_rules.engine import Engine
from bridge_rules.transform import UNMAPPED, InboundReport

REGISTERED = ["read", "bash", "my_tool"]
GATEWAY = """inbound:
  strip_prefixes: [proxy_, {prefix: GW_, case: insensitive}]
  collapse_doubled_prefixes: true
  match_registered: insensitive
"""


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    return write_rules(tmp_path_factory.mktemp("gw"), GATEWAY)


@pytest.mark.parametrize(
    ("wire", "local"),
    [
        ("proxy_Read", "read"),
        ("proxy_mcp__pi__my_tool", "my_tool"),
        ("gw_mcp__pi__my_tool", "my_tool"),
        ("proxy_proxy_Bash", "bash"),
        ("mcp__pi__mcp__pi__my_tool", "my_tool"),
        ("proxy_mcp__pi__mcp__pi__my_tool_ide", "my_tool"),
        ("My_Tool", "my_tool"),
        ("MY_TOOL_ide", "my_tool"),
        ("my_tool", "my_tool"),
        ("proxy_", None),
        ("proxy_rm_rf", None),
        ("mcp__pi__rm", None),
    ],
)
def test_gateway_mangled_names_map_back(gateway: Engine, wire: str, local: str | None) -> None:
    assert gateway.inbound_name(wire, REGISTERED) == local


def test_without_the_options_nothing_changes(eng: Engine) -> None:
    for wire in ("proxy_Read", "mcp__pi__mcp__pi__my_tool", "My_Tool"):
        assert eng.inbound_name(wire, REGISTERED) is None


def test_registered_match_needs_one_name(tmp_path: Path) -> None:
    rules = write_rules(tmp_path, GATEWAY)
    assert rules.inbound_name("TOOL", ["tool", "Tool"]) is None  # ambiguous: no guess
    assert rules.inbound_name("Tool", ["tool", "Tool"]) == "Tool"


def test_explain_traces_the_gateway_steps(gateway: Engine) -> None:
    text = gateway.explain("my_tool", REGISTERED).render_text()
    assert "proxy_mcp__pi__my_tool: maps back" in text
    assert "gateway: stripped prefix 'proxy_' (exact case) -> mcp__pi__my_tool" in text
    assert "gateway: collapsed doubled prefix 'mcp__pi__'" in text
    assert "MY_TOOL: maps back" in text


def use(name: str, **args: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": "toolu_1", "name": name, "input": args}


def message(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"id": "msg_1", "content": list(blocks), "stop_reason": "tool_use"}


def test_pass_is_the_default(eng: Engine) -> None:
    report = InboundReport()
    out = eng.inbound(message(use("Nope")), REGISTERED, report=report)
    assert out["content"][0]["name"] == "Nope"
    assert report.unmapped == []


def test_warn_logs_counts_and_reports(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    rules = write_rules(tmp_path, "inbound:\n  unmapped: warn\n")
    report = InboundReport()
    before = UNMAPPED.total
    with caplog.at_level(logging.WARNING, logger="bridge_rules.inbound"):
        out = rules.inbound(message(use("Bsah", command="ls"), use("Read")), REGISTERED, report)
    assert [b["name"] for b in out["content"]] == ["Bsah", "read"]  # passed on
    assert [(u.name, u.candidates) for u in report.unmapped] == [("Bsah", ("bash",))]
    assert report.header_value() == "Bsah"
    assert UNMAPPED.total == before + 1
    assert "tool call 'Bsah' maps to no registered tool (passed on); closest: bash" in caplog.text
    assert "ls" not in caplog.text  # arguments are never logged


def test_error_turns_the_call_into_text(tmp_path: Path) -> None:
    rules = write_rules(tmp_path, "inbound:\n  unmapped: error\n")
    out = rules.inbound(message({"type": "text", "text": "ok"}, use("Bsah")), REGISTERED)
    assert out["content"][0] == {"type": "text", "text": "ok"}
    assert out["content"][1]["type"] == "text"
    assert "'Bsah'" in out["content"][1]["text"]
    assert "'bash'" in out["content"][1]["text"]
    assert out["stop_reason"] == "end_turn"  # nothing left to run
    mixed = rules.inbound(message(use("Bsah"), use("Read")), REGISTERED)
    assert mixed["stop_reason"] == "tool_use"


def test_header_value_is_header_safe() -> None:
    from bridge_rules.transform.report import Unmapped

    report = InboundReport([Unmapped("a\r\nX-Evil: 1", ()), Unmapped("b", ())])
    value = report.header_value()
    assert value is not None
    assert "\r" not in value
    assert "\n" not in value
    assert value.endswith(",b")


def sse(*events: dict[str, Any]) -> bytes:
    return b"".join(
        b"event: " + e["type"].encode() + b"\ndata: " + orjson.dumps(e) + b"\n\n" for e in events
    )


def stream_of(name: str) -> bytes:
    block = {"type": "tool_use", "id": "toolu_1", "name": name, "input": {}}
    return sse(
        {"type": "message_start", "message": {"id": "msg_1", "content": []}},
        {"type": "content_block_start", "index": 0, "content_block": block},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"command": "ls"}'},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
        {"type": "message_stop"},
    )


def assembled(stream: bytes) -> dict[str, Any]:
    from tests.transform.test_stream_recovery import assemble

    return assemble(stream)


@pytest.mark.parametrize("cut", [1, 7, 10_000])
def test_error_in_a_stream_is_the_same_text(tmp_path: Path, cut: int) -> None:
    rules = write_rules(tmp_path, "inbound:\n  unmapped: error\n")
    stream = stream_of("Bsah")
    report = InboundReport()
    chunks = [stream[i : i + cut] for i in range(0, len(stream), cut)]
    out = assembled(b"".join(rules.inbound_stream(chunks, REGISTERED, report)))
    expected = rules.inbound(assembled(stream), REGISTERED)
    assert out["content"] == expected["content"]
    assert out["stop_reason"] == expected["stop_reason"] == "end_turn"
    assert [u.name for u in report.unmapped] == ["Bsah"]


def test_warn_in_a_stream_keeps_the_bytes(tmp_path: Path) -> None:
    rules = write_rules(tmp_path, "inbound:\n  unmapped: warn\n")
    report = InboundReport()
    stream = stream_of("Bsah")
    assert b"".join(rules.inbound_stream([stream], REGISTERED, report)) == stream
    assert [u.name for u in report.unmapped] == ["Bsah"]


@pytest.mark.parametrize(
    ("inbound", "wire", "closest"),
    [
        # no strip in the rules: the hint still compares the name without a leading segment
        ("inbound:\n  unmapped: warn\n", "proxy_Grep", ("grep",)),
        ("inbound:\n  unmapped: warn\n", "mcp__gw__Bsah", ("bash",)),
        # the rules' own strips: a suffix, and a prefix whose rest still does not map
        ("inbound:\n  unmapped: warn\n  strip_suffixes: [_x]\n", "Bsah_x", ("bash",)),
        ("inbound:\n  unmapped: warn\n  strip_prefixes: [gw_]\n", "gw_Raed", ("read",)),
    ],
)
def test_closest_tools_apply_the_inbound_strips(
    tmp_path: Path, inbound: str, wire: str, closest: tuple[str, ...]
) -> None:
    rules = write_rules(tmp_path, inbound)
    report = InboundReport()
    rules.inbound(message(use(wire)), ["grep", "bash", "read"], report=report)
    assert [(u.name, u.candidates) for u in report.unmapped] == [(wire, closest)]
