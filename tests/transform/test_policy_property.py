"""Property: no denied tool reaches the agent, and every allowed one does.

Generated: a policy (``deny`` and ``allow`` globs over the agents' local and wire names,
switches, trusted servers, ``on_denied``), the switches a request adds
(``x-bridge-rules-policy``), the tools a request sends, the model id (gate open or shut),
and an answer whose calls use every spelling of a name (case, ``_ide``, the agent's prefix,
MCP forms, names of no tool), given as JSON, as SSE cut at random bytes, or as
``<tool_call>`` text to recover.

The oracle shares nothing with the code under test but the rule files' data: the agent's
tools and the wire name each goes out as are a table written here (checked against what
the rules send, below), the switch table is read from the packaged YAML, globs are
matched by :func:`fnmatch.fnmatchcase`, an MCP name's servers are enumerated by a regex
search, and the agent's dispatch is emulated: pi runs only a tool of exactly the name it
gets, opencode also that name lower-cased when it has no such tool.
"""

from __future__ import annotations

import fnmatch
import itertools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML
from tests.transform.spellings import COMMON, Spelling, data_of
from tests.transform.spellings import spellings as upstream_spellings

import bridge_rules
from bridge_rules.engine import Engine

ROOT = Path(__file__).resolve().parents[2]
TABLE: dict[str, list[str]] = YAML(typ="safe").load(
    (ROOT / "rules" / "profiles" / "capabilities.yaml").read_text()
)["policy"]["switch_table"]
EXTRA = {  # tools an agent may have besides its pin's, by local name -> wire name
    "mcp__exa__search": "mcp__exa__search",
    "mcp__evil__x": "mcp__evil__x",
    "mcp__exa__evil__steal": "mcp__exa__evil__steal",
    "mcp____evil__x": "mcp____evil__x",
}


@dataclass(frozen=True)
class Agent:
    rules: str
    wires: dict[str, str]
    """Every tool the agent has: local name -> the wire name it goes out as."""
    prefix: str
    folds: bool
    pin: tuple[str, ...]
    """The tools of the agent's local pin: what the rules know it has."""


AGENTS = {
    "pi": Agent(
        "extends: default\nlocal_pin: pi@0.73.1\n",
        {
            "read": "Read",
            "bash": "Bash",
            "edit": "Edit",
            "write": "Write",
            "grep": "Grep",
            "find": "Glob",
            "ls": "mcp__pi__ls",
            "custom_tool": "mcp__pi__custom_tool",
            "web_search_exa": "mcp__exa__web_search",
            **EXTRA,
        },
        "mcp__pi__",
        False,
        ("read", "bash", "edit", "write", "grep", "find", "ls"),
    ),
    "opencode": Agent(
        "extends: opencode\n",
        {
            "read": "Read",
            "bash": "Bash",
            "edit": "Edit",
            "write": "Write",
            "grep": "Grep",
            "glob": "Glob",
            "task": "Agent",
            "todowrite": "TodoWrite",
            "webfetch": "WebFetch",
            "skill": "Skill",
            "custom_tool": "mcp__opencode__custom_tool",
            **EXTRA,
        },
        "mcp__opencode__",
        True,
        ("bash", "edit", "glob", "grep", "read", "skill", "task", "todowrite", "webfetch", "write"),
    ),
}
SERVERS = ["exa", "evil", "pi", "opencode", "exa__evil", "", "__evil"]


# ---------------------------------------------------------------- the oracle
def servers(name: str) -> set[str]:
    """Every server an MCP name may belong to; empty for a name that is not one."""
    if name[:5].lower() != "mcp__":
        return set()
    rest = name[5:]
    cuts = [m.start() for m in re.finditer(r"(?=__)", rest) if m.start() + 2 < len(rest)]
    return {rest[:c] for c in cuts} or {rest}


def unprefixed(name: str, prefix: str) -> str:
    while len(name) > len(prefix) and name.lower().startswith(prefix):
        name = name[len(prefix) :]
    return name


@dataclass(frozen=True)
class Pol:
    deny: tuple[str, ...]
    allow: tuple[str, ...] | None
    trusted: tuple[str, ...] | None
    switches: tuple[str, ...]
    on_denied: str

    def yaml(self) -> str:
        out = "policy:\n"
        out += f"  deny: {json.dumps(list(self.deny))}\n"
        if self.allow is not None:
            out += f"  allow: {json.dumps(list(self.allow))}\n"
        if self.trusted is not None:
            out += f"  trusted_servers: {json.dumps(list(self.trusted))}\n"
        out += f"  switches: {json.dumps(list(self.switches))}\n"
        return out + f"  on_denied: {self.on_denied}\n"


def denied(pol: Pol, extra: tuple[str, ...], agent: Agent, local: str) -> bool:
    """Whether the policy denies the agent's tool ``local``."""
    names = (local, agent.wires[local])
    globs = [*pol.deny, *(g for s in (*pol.switches, *extra) for g in TABLE[s])]
    if any(fnmatch.fnmatchcase(n, g) for n in names for g in globs):
        return True
    if pol.trusted is not None:
        found = set().union(*(servers(unprefixed(n, agent.prefix)) for n in names))
        if found:
            return not found <= set(pol.trusted)
    if pol.allow is not None:
        return not any(fnmatch.fnmatchcase(n, g) for n in names for g in pol.allow)
    return False


def dispatch(agent: Agent, name: str) -> str | None:
    """The tool the agent runs for a call it gets under ``name``."""
    if name in agent.wires:
        return name
    if agent.folds and name.lower() in agent.wires:
        return name.lower()
    return None


def norm(agent: Agent, name: str) -> str:
    n = unprefixed(name.lower(), agent.prefix)
    return n[:-4] if n.endswith("_ide") and len(n) > 4 else n


def stands_for(agent: Agent, name: str) -> set[str]:
    """The agent's tools a call under ``name`` may mean: equal to one of its names without
    case, an ``_ide`` suffix or the agent's prefix."""
    want = norm(agent, name)
    return {t for t, w in agent.wires.items() if want in (norm(agent, t), norm(agent, w))}


def must_deny(case: Case, call: str) -> bool:
    """Whether the policy denies a call under ``call``: a deny glob matches it, or it may
    mean a denied tool the rules or the request know of (the pin's tools, the tools sent,
    a name under the agent's prefix)."""
    agent, pol = case.agent, case.pol
    globs = [*pol.deny, *(g for s in (*pol.switches, *case.extra) for g in TABLE[s])]
    if any(fnmatch.fnmatchcase(call, g) for g in globs):
        return True
    under = None  # what is left under the agent's prefix, as written: a local name as it is
    if call.lower().startswith(agent.prefix):
        under = unprefixed(call, agent.prefix)
        under = under[:-4] if under.lower().endswith("_ide") and len(under) > 4 else under
        under = under.lower() if agent.folds else under
    known = {t for t in stands_for(agent, call) if t in agent.pin or t in case.sent or t == under}
    return any(denied(pol, case.extra, agent, t) for t in known)


# ---------------------------------------------------------------- generators
def spellings(agent: Agent, local: str) -> list[str]:
    wire = agent.wires[local]
    return [
        wire,
        local,
        wire.upper(),
        wire.lower(),
        wire.swapcase(),
        wire + "_ide",
        wire.upper() + "_IDE",
        agent.prefix + local,
        agent.prefix.upper() + local.upper(),
        "mcp__pi__" + local,
    ]


@st.composite
def globs(draw: st.DrawFn, agent: Agent) -> str:
    local = draw(st.sampled_from(sorted(agent.wires)))
    name = draw(st.sampled_from([local, agent.wires[local]]))
    how = draw(st.sampled_from(["exact", "star", "head", "upper", "qmark"]))
    if how == "star":
        return name[: draw(st.integers(0, len(name)))] + "*"
    if how == "head":
        return "*" + name[draw(st.integers(0, len(name))) :]
    if how == "upper":
        return name.upper()
    if how == "qmark":
        at = draw(st.integers(0, len(name) - 1))
        return name[:at] + "?" + name[at + 1 :]
    return name


@st.composite
def policies(draw: st.DrawFn, agent: Agent) -> Pol:
    allow = None
    if draw(st.booleans()):
        allow = tuple(draw(st.lists(globs(agent), max_size=4)))
    trusted = None
    if draw(st.booleans()):
        trusted = tuple(draw(st.lists(st.sampled_from(SERVERS[:5]), max_size=3, unique=True)))
    return Pol(
        tuple(draw(st.lists(globs(agent), max_size=3))),
        allow,
        trusted,
        tuple(draw(st.lists(st.sampled_from(sorted(TABLE)), max_size=2, unique=True))),
        draw(st.sampled_from(["text", "drop", "error"])),
    )


@st.composite
def call_names(draw: st.DrawFn, agent: Agent) -> str:
    if draw(st.integers(0, 9)) == 0:
        return draw(st.text("abcABC_", min_size=1, max_size=8))
    local = draw(st.sampled_from(sorted(agent.wires)))
    return draw(st.sampled_from(spellings(agent, local)))


@dataclass
class Case:
    agent: Agent
    pol: Pol
    extra: tuple[str, ...]
    sent: list[str]
    model: str
    calls: list[str]
    form: str
    cuts: list[int]
    how: Spelling
    """How the upstream writes the stream (``form == "sse"``)."""


@st.composite
def cases(draw: st.DrawFn) -> Case:
    agent = AGENTS[draw(st.sampled_from(sorted(AGENTS)))]
    tools = sorted(agent.wires)
    return Case(
        agent,
        draw(policies(agent)),
        tuple(draw(st.lists(st.sampled_from(sorted(TABLE)), max_size=1))),
        draw(st.lists(st.sampled_from(tools), min_size=1, unique=True)),
        draw(st.sampled_from(["claude-sonnet-4-5", "gpt-5", "sonnet"])),
        draw(st.lists(call_names(agent), min_size=1, max_size=3)),
        draw(st.sampled_from(["json", "sse", "recovered"])),
        draw(st.lists(st.integers(1, 4000), max_size=6)),
        draw(st.one_of(st.just(COMMON), upstream_spellings())),
    )


# ---------------------------------------------------------------- running
_ENGINES: dict[tuple[str, Pol], Engine] = {}


QUIET = "suppress:\n  - {code: BR318, reason: generated globs spell names in every case}\n"


def engine(tmp: Path, agent: Agent, pol: Pol) -> Engine:
    key = (agent.rules, pol)
    found = _ENGINES.get(key)
    if found is None:
        path = tmp / f"r{len(_ENGINES)}.yaml"
        head = "bridge-rules: 1\n" + agent.rules + "text:\n  recover_tool_calls: true\n" + QUIET
        path.write_text(head + pol.yaml())
        found = _ENGINES[key] = bridge_rules.load(str(path))
    return found


def stream(calls: list[str], how: Spelling) -> bytes:
    def ev(data: dict[str, Any]) -> bytes:
        if how == COMMON:  # as Anthropic writes it, byte for byte
            return b"event: " + data["type"].encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"
        return how.event(data["type"], data)

    out = ev({"type": "message_start", "message": {"id": "m", "role": "assistant", "content": []}})
    for i, name in enumerate(calls):
        block = {"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": {}}
        out += ev({"type": "content_block_start", "index": i, "content_block": block})
        delta = {"type": "input_json_delta", "partial_json": "{}"}
        out += ev({"type": "content_block_delta", "index": i, "delta": delta})
        out += ev({"type": "content_block_stop", "index": i})
    out += ev({"type": "message_delta", "delta": {"stop_reason": "tool_use"}})
    return out + ev({"type": "message_stop"})


def delivered(turn: Any, case: Case) -> list[tuple[str, str]] | None:
    """(id, name) of the calls the agent gets; None when the answer is refused."""
    if case.form == "json":
        content = [{"type": "tool_use", "id": f"toolu_{i}", "name": n, "input": {}} for i, n in
                   enumerate(case.calls)]  # fmt: skip
        message = {"type": "message", "role": "assistant", "content": content}
        out = turn.message({**message, "stop_reason": "tool_use"})
    elif case.form == "recovered":
        text = "".join(f'<tool_call>{{"name": "{n}", "arguments": {{}}}}</tool_call>'
                       for n in case.calls)  # fmt: skip
        message = {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
        }
        out = turn.message({**message, "stop_reason": "end_turn"})
    else:
        raw = stream(case.calls, case.how)
        cuts = sorted({c % len(raw) for c in case.cuts} | {0, len(raw)})
        chunks = [raw[a:b] for a, b in itertools.pairwise(cuts) if b > a]
        data = data_of(b"".join(turn.stream(chunks)))
        if any(d["type"] == "error" for d in data):
            return None
        return [(d["content_block"]["id"], d["content_block"]["name"]) for d in data
                if d["type"] == "content_block_start"
                and d["content_block"]["type"] == "tool_use"]  # fmt: skip
    if out.get("type") == "error":
        return None
    return [(b["id"], b["name"]) for b in out["content"] if b["type"] == "tool_use"]


def body(case: Case) -> bytes:
    tools = [{"name": t, "input_schema": {"type": "object"}} for t in case.sent]
    payload = {
        "model": case.model,
        "max_tokens": 9,
        "messages": [{"role": "user", "content": "go"}],
    }
    return json.dumps({**payload, "tools": tools}).encode()


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases())
def test_no_denied_tool_reaches_the_agent_and_every_allowed_one_does(
    case: Case, tmp_path_factory: pytest.TempPathFactory
) -> None:
    agent = case.agent
    e = engine(tmp_path_factory.getbasetemp(), agent, case.pol)
    turn = e.turn(body(case), policy=case.extra)
    gate_open = turn.gate_open
    got = delivered(turn, case)
    report = turn.report
    if got is None:  # on_denied: error refused the answer, because of a denied call
        assert case.pol.on_denied == "error"
        assert report.denied
        return
    for _id, name in got:  # soundness: what the agent runs is never a denied tool
        ran = dispatch(agent, name)
        assert ran is None or not denied(case.pol, case.extra, agent, ran), (name, ran)
    if case.form != "recovered":  # one decision per call, on every name it stands for
        ids = {i for i, _name in got}
        for i, call in enumerate(case.calls):
            if must_deny(case, call):
                assert f"toolu_{i}" not in ids, call
        assert len(got) + len(report.denied) == len(case.calls)  # each denial reported
    names = [name for _id, name in got]
    if case.form == "recovered" and not gate_open:
        return  # with the gate shut nothing is recovered: the text goes on as it is
    for call in case.calls:  # completeness: the tool's own wire name (gate shut: its name)
        targets = [t for t in case.sent if call == (agent.wires[t] if gate_open else t)]
        if not targets:
            continue
        meant = stands_for(agent, call) | set(targets)
        if any(denied(case.pol, case.extra, agent, t) for t in meant):
            continue
        assert targets[0] in names, (call, names, [d.rule for d in report.denied])


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_the_oracles_wire_names_are_what_the_rules_send(name: str, tmp_path: Path) -> None:
    agent = AGENTS[name]
    e = engine(tmp_path, agent, Pol((), None, None, (), "text"))
    tools = [{"name": t, "input_schema": {"type": "object"}} for t in agent.wires]
    payload = {"model": "claude-x", "messages": [], "tools": tools}
    sent = json.loads(e.turn(json.dumps(payload).encode()).body)["tools"]
    assert {t: s["name"] for t, s in zip(agent.wires, sent, strict=True)} == agent.wires
