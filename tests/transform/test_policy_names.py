"""The bypasses measured on main 6fa5903 (issue 34), each from the attacker's side: a denied
tool called under another spelling, forced by ``tool_choice``, reached with the gate shut,
or through MCP names; in JSON, in a stream cut at every byte, as recovered text and under
the request's switches. Each must be denied, reported on the turn and counted."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest
from tests.transform.spellings import Spelling, data_of

import bridge_rules
from bridge_rules import mcpnames
from bridge_rules.engine import Engine
from bridge_rules.transform.unmapped import DENIED

ROOT = Path(__file__).resolve().parents[2]
PI = "extends: default\nlocal_pin: pi@0.73.1\n"
OPENCODE = "extends: opencode\n"


def engine(tmp_path: Path, head: str, policy: str) -> Engine:
    path = tmp_path / "rules.yaml"
    path.write_text(
        "bridge-rules: 1\n" + head + "text:\n  recover_tool_calls: true\npolicy:\n" + policy
    )
    return bridge_rules.load(str(path))


def body(*tools: Any, model: str = "claude-sonnet-4-5", **extra: Any) -> bytes:
    listed = [t if isinstance(t, dict) else {"name": t, "input_schema": {}} for t in tools]
    payload = {"model": model, "max_tokens": 9, "messages": [{"role": "user", "content": "go"}]}
    return json.dumps({**payload, "tools": listed, **extra}).encode()


def call(name: str) -> dict[str, Any]:
    block = {"type": "tool_use", "id": "toolu_1", "name": name, "input": {}}
    return {"type": "message", "role": "assistant", "content": [block], "stop_reason": "tool_use"}


def ev(data: dict[str, Any]) -> bytes:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()


def stream(name: str, how: Spelling | None = None) -> bytes:
    """A call to ``name``, as Anthropic writes it or as ``how`` says."""
    block = {"type": "tool_use", "id": "toolu_1", "name": name, "input": {}}
    delta = {"type": "input_json_delta", "partial_json": '{"command": "id"}'}
    return b"".join(
        ev(d) if how is None else how.event(d["type"], d)
        for d in (
            {"type": "message_start", "message": {"id": "m", "role": "assistant", "content": []}},
            {"type": "content_block_start", "index": 0, "content_block": block},
            {"type": "content_block_delta", "index": 0, "delta": delta},
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
            {"type": "message_stop"},
        )
    )


def calls_in(raw: bytes) -> list[str]:
    found = [json.loads(line[6:]) for line in raw.splitlines() if line.startswith(b"data: ")]
    return [
        d["content_block"]["name"]
        for d in found
        if d["type"] == "content_block_start" and d["content_block"]["type"] == "tool_use"
    ]


BYPASSES = [  # (agent, policy, the call that reached the agent on main)
    (PI, "  deny: [bash]\n", "Bash"),
    (PI, "  deny: ['ba*']\n", "Bash"),
    (PI, "  deny: [bash]\n", "BASH"),
    (PI, "  deny: [bash]\n", "Bash_ide"),
    (PI, "  deny: [bash]\n", "mcp__pi__bash"),
    (PI, "  deny: [bash]\n", "MCP__PI__BASH_IDE"),
    (OPENCODE, "  switches: [no_exec]\n", "BASH"),
    (OPENCODE, "  switches: [read_only]\n", "EDIT"),
    (OPENCODE, "  switches: [read_only]\n", "WRITE"),
    (OPENCODE, "  deny: [Bash]\n", "BASH"),
    (OPENCODE, "  deny: [Bash]\n", "bash"),
    (OPENCODE, "  deny: [bash]\n", "mcp__opencode__BASH"),
    (OPENCODE, "  trusted_servers: [exa]\n", "MCP__EVIL__X"),
]
IDS = [f"{'pi' if a == PI else 'opencode'}-{p.strip()}-{c}" for a, p, c in BYPASSES]


@pytest.mark.parametrize(("agent", "policy", "name"), BYPASSES, ids=IDS)
@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "gpt-5"])
def test_a_denied_tool_under_any_spelling_is_denied_reported_and_counted(
    tmp_path: Path, agent: str, policy: str, name: str, model: str
) -> None:
    e = engine(tmp_path, agent, policy)
    before = DENIED.total
    turn = e.turn(body("read", "bash", "edit", "write", model=model))
    out = turn.message(call(name))
    assert [b["type"] for b in out["content"]] == ["text"]
    assert out["stop_reason"] == "end_turn"
    assert [d.name for d in turn.report.denied] == [name]
    assert DENIED.total == before + 1
    raw = stream(name)
    for cut in range(1, len(raw)):  # a stream cut at every byte
        turn = e.turn(body("read", "bash", "edit", "write", model=model))
        assert calls_in(b"".join(turn.stream([raw[:cut], raw[cut:]]))) == [], cut
        assert len(turn.report.denied) == 1


@pytest.mark.parametrize(("agent", "policy", "name"), BYPASSES[:6], ids=IDS[:6])
def test_a_recovered_call_is_judged_the_same(
    tmp_path: Path, agent: str, policy: str, name: str
) -> None:
    """Recovery only makes calls to registered tools: a denied one is not registered, so
    the text stays text; an allowed tool's recovered call passes."""
    e = engine(tmp_path, agent, policy)
    text = f'<tool_call>{{"name": "{name}", "arguments": {{}}}}</tool_call>'
    message = {"type": "message", "role": "assistant", "content": [{"type": "text", "text": text}]}
    out = e.turn(body("read", "bash")).message(message)
    assert all(b["type"] == "text" for b in out["content"])
    ok = '<tool_call>{"name": "Read", "arguments": {}}</tool_call>'
    message["content"] = [{"type": "text", "text": ok}]
    out = e.turn(body("read", "bash")).message(message)
    assert [b.get("name") for b in out["content"]] == ["read"]


@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "gpt-5", "sonnet", "glm-4.6"])
def test_the_request_switches_hold_whatever_the_gate(tmp_path: Path, model: str) -> None:
    e = engine(tmp_path, OPENCODE, "  deny: [webfetch]\n")
    turn = e.turn(body("read", "bash", "write", model=model), policy=["no_exec"])
    assert [t["name"] for t in json.loads(turn.body)["tools"]] in (
        ["Read", "Write"],
        ["read", "write"],
    )
    assert turn.message(call("BASH"))["content"][0]["type"] == "text"
    assert turn.message(call("Write"))["content"][0]["type"] == "tool_use"


@pytest.mark.parametrize(
    "forced", ["bash", "Bash", "BASH", "mcp__pi__bash", "Bash_ide", "MCP__PI__bash"]
)
@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "gpt-5"])
def test_a_forced_denied_tool_is_refused_under_any_spelling(
    tmp_path: Path, forced: str, model: str
) -> None:
    e = engine(tmp_path, PI, "  deny: [bash]\n")
    turn = e.turn(body("read", "bash", model=model, tool_choice={"type": "tool", "name": forced}))
    assert turn.rejected is not None
    assert f"'{forced}'" in turn.rejected
    assert "policy.deny 'bash'" in turn.rejected
    allowed = e.turn(
        body("read", "bash", model=model, tool_choice={"type": "tool", "name": "read"})
    )
    assert allowed.rejected is None


def test_with_the_gate_shut_the_body_is_the_clients_unless_the_policy_takes_something(
    tmp_path: Path,
) -> None:
    e = engine(tmp_path, PI, "  deny: [bash]\n")
    raw = body("read", "write", model="gpt-5")
    assert e.turn(raw).body == raw  # nothing denied: the client's bytes
    turn = e.turn(body("read", "bash", "write", model="gpt-5"))
    sent = json.loads(turn.body)
    assert [t["name"] for t in sent["tools"]] == ["read", "write"]  # names stay local
    assert sent["model"] == "gpt-5"
    assert not turn.gate_open
    assert turn.message(call("write"))["content"][0]["name"] == "write"  # no mapping back
    assert turn.message(call("bash"))["content"][0]["type"] == "text"
    other = tmp_path / "plain"
    other.mkdir()
    plain = engine(other, PI, "  deny: []\n")  # no policy in force: nothing changes
    assert plain.turn(body("read", "bash", model="gpt-5")).body == body(
        "read", "bash", model="gpt-5"
    )


# ---------------------------------------------------------------- MCP names
def reference_servers(name: str) -> set[str]:
    """Brute force: every i with ``__`` at i in the rest and something after it."""
    if not name.lower().startswith("mcp__"):
        return set()
    rest = name[5:]
    found = {rest[:i] for i in range(len(rest)) if rest[i : i + 2] == "__" and i + 2 < len(rest)}
    return found or {rest}


@pytest.mark.parametrize(
    "name",
    ["mcp__exa__search", "mcp____evil__x", "mcp__exa__evil__steal", "mcp__a___b", "mcp__x",
     "mcp__", "MCP__exa__x", "mcp__exa__", "read", "mcp_exa__x", "mcp______"],
)  # fmt: skip
def test_the_mcp_reader_gives_every_possible_server(name: str) -> None:
    assert set(mcpnames.servers(name)) == reference_servers(name)


def test_the_mcp_reader_agrees_with_brute_force_on_generated_names() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=500, deadline=None)
    @given(st.text("a_", max_size=10), st.sampled_from(["mcp__", "MCP__", "mcp_", ""]))
    def check(rest: str, head: str) -> None:
        assert set(mcpnames.servers(head + rest)) == reference_servers(head + rest)

    check()


@pytest.mark.parametrize(
    ("trusted", "tool", "passes"),
    [
        ("[exa]", "mcp__exa__search", True),
        ("[exa]", "mcp____evil__x", False),
        ("[exa]", "mcp__exa__evil__steal", False),
        ("[exa, exa__evil]", "mcp__exa__evil__steal", True),
        ("[exa]", "MCP__EVIL__x", False),
        ("[exa]", "ls", True),  # pi's own, sent as mcp__pi__ls
        ("[exa]", "my_extension_tool", True),  # sent as mcp__pi__my_extension_tool
        ("[exa]", "mcp__pi__mcp__evil__x", False),
        ("[evil]", "web_search_exa", False),  # the rules send it as exa's mcp__exa__web_search
    ],
)
def test_trusted_servers_judge_mcp_names_only_and_every_possible_server(
    tmp_path: Path, trusted: str, tool: str, passes: bool
) -> None:
    e = engine(tmp_path, PI, f"  trusted_servers: {trusted}\n")
    turn = e.turn(body("read", tool))
    sent = [t["name"] for t in json.loads(turn.body)["tools"]]
    assert (len(sent) == 2) is passes, sent
    wire = sent[-1] if passes else e.runtime.outbound_name(tool)
    out = e.turn(body("read", tool)).message(call(wire))
    assert (out["content"][0]["type"] == "tool_use") is passes


def test_opencodes_own_tools_are_not_mcp_tools_of_a_server_opencode(tmp_path: Path) -> None:
    e = engine(tmp_path, OPENCODE, "  trusted_servers: [exa]\n")
    turn = e.turn(body("read", "github_search", "mcp__evil__x"))
    assert [t["name"] for t in json.loads(turn.body)["tools"]] == [
        "Read",
        "mcp__opencode__github_search",
    ]
    assert turn.message(call("mcp__opencode__github_search"))["content"][0]["type"] == "tool_use"


def connector_body(model: str) -> bytes:
    servers = [
        {"type": "url", "url": "https://mcp.exa.ai/mcp", "name": "exa"},
        {"type": "url", "url": "https://evil.example/mcp", "name": "evil"},
        {"type": "url", "url": "https://x.example/mcp", "name": "exa__evil"},
    ]
    toolsets = [{"type": "mcp_toolset", "mcp_server_name": n} for n in ("exa", "evil", "exa__evil")]
    return body("read", *toolsets, model=model, mcp_servers=servers)


@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "gpt-5"])
@pytest.mark.parametrize(
    ("policy", "kept"),
    [
        ("  trusted_servers: [exa]\n", ["exa"]),
        ("  deny: ['mcp__evil__*']\n", ["exa", "exa__evil"]),
        ("  deny: ['mcp__*']\n", []),
        ("  allow: [read, 'mcp__exa__*']\n", ["exa", "exa__evil"]),  # a glob over names
        ("  allow: [read, 'mcp__exa__*']\n  trusted_servers: [exa]\n", ["exa"]),
        ("  deny: [mcp__evil__one_tool]\n", ["exa", "evil", "exa__evil"]),
    ],
)
def test_the_mcp_connector_is_filtered_by_the_policy(
    tmp_path: Path, model: str, policy: str, kept: list[str]
) -> None:
    e = engine(tmp_path, PI, policy)
    sent = json.loads(e.turn(connector_body(model)).body)
    assert [s["name"] for s in sent["mcp_servers"]] == kept
    toolsets = [t["mcp_server_name"] for t in sent["tools"] if t.get("type") == "mcp_toolset"]
    assert toolsets == kept


# ---------------------------------------------------------------- the switch table
@pytest.mark.parametrize(
    ("switch", "tool"),
    [
        ("read_only", {"type": "memory_20250818", "name": "memory"}),
        ("read_only", {"type": "text_editor_20250124", "name": "str_replace_editor"}),
        ("no_exec", {"type": "computer_20250124", "name": "computer", "display_width_px": 8}),
        *(("no_exec", {"name": n, "input_schema": {}}) for n in
          ("Agent", "Monitor", "Workflow", "CronCreate", "ScheduleWakeup", "RemoteTrigger")),
    ],
)  # fmt: skip
def test_the_switches_cover_typed_client_tools_and_tools_that_run_commands(
    tmp_path: Path, switch: str, tool: dict[str, Any]
) -> None:
    e = engine(tmp_path, "extends: default\n", f"  switches: [{switch}]\n")
    turn = e.turn(body("read", tool))
    assert [t["name"] for t in json.loads(turn.body)["tools"]] == ["Read"]
    assert turn.message(call(tool["name"]))["content"][0]["type"] == "text"


def test_every_command_tool_of_the_pins_is_in_a_switch() -> None:
    """Each pinned Claude Code tool whose schema takes a command, a script or a prompt run
    later is denied by no_exec: a new pin with such a tool fails here until it is listed."""
    from ruamel.yaml import YAML

    table = YAML(typ="safe").load((ROOT / "rules/profiles/capabilities.yaml").read_text())
    no_exec = set(table["policy"]["switch_table"]["no_exec"])
    runs = {"command", "script", "scriptPath", "subagent_type"}
    for pin in sorted((ROOT / "schemas/claude-code").glob("*.json")):
        tools = json.loads(pin.read_text())["tools"]
        for name, schema in tools.items():
            fields = set(schema.get("properties") or {})
            later = {"prompt", "cron"} <= fields or {"prompt", "delaySeconds"} <= fields
            if fields & runs or later:
                assert name in no_exec, (pin.name, name)


def test_the_docs_refusal_message_is_the_real_one(tmp_path: Path) -> None:
    page = (ROOT / "docs/policy.md").read_text()
    shown = re.search(r"`(tool_choice forces tool 'write'.*?)`", page, re.S)
    assert shown is not None
    path = tmp_path / "policy.yaml"
    path.write_text(
        "bridge-rules: 1\nextends: default\nlocal_pin: pi@0.73.1\npolicy:\n"
        "  switches: [read_only]\n"
    )
    turn = bridge_rules.load(str(path)).turn(
        body("read", "write", tool_choice={"type": "tool", "name": "write"})
    )
    real = (turn.rejected or "").replace("bridge_rules/_data/rules/", "rules/")
    assert " ".join(shown[1].split()) == real


@pytest.mark.parametrize(
    "written", [rb"\u0042ASH", rb"B\u0041SH", rb"\u0062ash", rb"\u0042ash_ide"]
)
def test_a_name_spelt_with_json_escapes_in_a_stream_is_judged_as_read(
    tmp_path: Path, written: bytes
) -> None:
    e = engine(tmp_path, OPENCODE, "  deny: [Bash]\n")
    raw = stream("PLACEHOLDER").replace(b"PLACEHOLDER", written)
    for cut in range(1, len(raw), 7):
        turn = e.turn(body("read"))
        assert calls_in(b"".join(turn.stream([raw[:cut], raw[cut:]]))) == []
        assert len(turn.report.denied) == 1


def test_with_the_gate_shut_a_cached_conversation_goes_as_written_less_the_denied_tool(
    tmp_path: Path,
) -> None:
    """Messages the outbound cache holds (stored while the gate was open) are spliced back
    as the client's own bytes when a shut gate's request is serialised again."""
    e = engine(tmp_path, PI, "  deny: [bash]\n")
    msgs: list[Any] = []
    for i in range(30):
        use = {"type": "tool_use", "id": f"toolu_{i}", "name": "read", "input": {"path": "a"}}
        done = {"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": "ok"}
        msgs.append({"role": "user", "content": "x" * 3000 + str(i)})
        msgs.append({"role": "assistant", "content": [use]})
        msgs.append({"role": "user", "content": [done]})
    tools = [{"name": n, "input_schema": {"type": "object"}} for n in ("read", "bash")]

    def raw(model: str, messages: list[Any]) -> bytes:
        payload = {"model": model, "max_tokens": 9, "messages": messages, "tools": tools}
        return json.dumps(payload, separators=(",", ":")).encode()

    e.turn(raw("claude-sonnet-4-5", msgs))
    e.turn(raw("claude-sonnet-4-5", [*msgs, {"role": "user", "content": "more"}]))
    shut = raw("gpt-5", [*msgs, {"role": "user", "content": "more"}])
    turn = e.turn(shut)
    assert turn.outcome.reused > 0
    assert json.loads(turn.body) == {**json.loads(shut), "tools": tools[:1]}


def casings(word: str) -> list[str]:
    """Every spelling of ``word`` in upper and lower case letters."""
    return ["".join(p) for p in itertools.product(*({c.lower(), c.upper()} for c in word))]


@pytest.mark.parametrize("local", ["find", "ls"])
@pytest.mark.parametrize("sent", [(), ("bash",), ("bash", "find", "ls")])
def test_a_local_name_in_another_case_is_denied_whatever_its_wire_name(
    tmp_path: Path, local: str, sent: tuple[str, ...]
) -> None:
    """``find`` goes out as ``Glob`` and ``ls`` as ``mcp__pi__ls``: a call spelt as the
    local name in another case (``FIND``, ``mcp__pi__FIND_ide``) may mean the denied tool
    to an agent that folds case, so it never reaches the agent (found by the property test
    on main db77154: ``MCP__PI__FIND`` passed)."""
    e = engine(tmp_path, PI, f"  deny: [{local}]\n")
    names = [
        head + spelling + tail
        for spelling in casings(local)
        for head in ("", "mcp__pi__", "MCP__PI__", "Mcp__Pi__")
        for tail in ("", "_ide", "_IDE")
    ]
    for name in names:
        turn = e.turn(body(*sent))
        out = turn.message(call(name))
        assert [b["type"] for b in out["content"]] == ["text"], name
        assert [d.name for d in turn.report.denied] == [name]
        turn = e.turn(body(*sent))
        assert calls_in(b"".join(turn.stream([stream(name)]))) == [], name
    allowed = engine(tmp_path, PI, "  deny: [write]\n")  # the same spellings pass when allowed
    for name in names:
        out = allowed.turn(body(*sent)).message(call(name))
        assert [b["type"] for b in out["content"]] == ["tool_use"], name


# ------------------------------------------------- the stream written another way
ESCAPED = [  # (how the upstream writes the stream, the call's name)
    (Spelling(escaped=frozenset("i")), "Bash"),  # "\u0069ndex", "\u0069d"
    (Spelling(escaped=frozenset("_")), "Bash"),  # "tool\u005fuse", "content\u005fblock"
    (Spelling(escaped=frozenset("a")), "Bash"),  # "B\u0061sh": the name itself
    (Spelling(escaped=frozenset("B"), upper=True), "BASH"),  # "\u0042ASH"
    (Spelling(escaped=frozenset("_"), named=False), "Bash"),  # no event: line to go by
    (Spelling(eol=b"\r\n", space=b"", escaped=frozenset("n"), lines=2), "Bash"),
]


ESCAPED_IDS = ["key", "type", "name", "name-hex-upper", "unnamed-type", "crlf-two-lines"]


@pytest.mark.parametrize(("how", "name"), ESCAPED, ids=ESCAPED_IDS)
@pytest.mark.parametrize("agent", [PI, OPENCODE], ids=["pi", "opencode"])
def test_a_denied_call_in_a_stream_written_with_escapes_is_denied(
    tmp_path: Path, agent: str, how: Spelling, name: str
) -> None:
    """The passes read a stream's common shape from its bytes; a ``\\u`` escape in a key,
    a type or the name made an event look like none of theirs, and it went on unjudged:
    opencode ran ``Bash`` under ``deny: [bash]``."""
    e = engine(tmp_path, agent, "  deny: [bash]\n")
    raw = stream(name, how)
    for size in (len(raw), 1, 7, 64):
        turn = e.turn(body("read", "bash"))
        out = data_of(b"".join(turn.stream([raw[i : i + size] for i in range(0, len(raw), size)])))
        blocks = [d["content_block"] for d in out if d["type"] == "content_block_start"]
        assert [b["type"] for b in blocks] == ["text"], size
        assert [d.name for d in turn.report.denied] == [name], size
