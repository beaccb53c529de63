"""The outbound cache against the plain path, turn by turn, on conversations past 16 KB.

Each generated conversation is sent as an agent sends it: every request repeats the
previous messages and adds new ones, padded so the bodies cross the cache's default
``min_body``; tools, ``tool_choice``, system text and the gate may change between
turns. Every turn must come out of ``rewrite_outbound_bytes`` with the bytes and
outcome of ``jsonio.dumps(rewrite_outbound(rt, jsonio.loads(body)).payload)``, and so must
``cache=False``. Three rule sets keep one cache each across all examples, and every
conversation opens with one of a few fixed histories, so what one example stored is
met again by others under other tools: with and without tool search, with other typed
tools.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.budget import examples
from tests.transform.test_cache import mark, strip_marker

import bridge_rules
from bridge_rules import jsonio
from bridge_rules.engine import Engine
from bridge_rules.transform import rewrite_outbound, rewrite_outbound_bytes

HERE = Path(__file__).resolve().parent
CLOSED = {"PI_ANTHROPIC_MESSAGES_DISABLE_CANONICAL": "1"}
RULES = {
    "default": None,
    "pi-tool-guard": "pi-tool-guard",
    "fixture": str(HERE / "data" / "cache_rules.yaml"),
}
ENGINES: dict[str, Engine] = {}


def engine(rules: str) -> Engine:
    """One engine per rule set for the whole session, with the cache's default bounds."""
    if rules not in ENGINES:
        ENGINES[rules] = bridge_rules.load(RULES[rules])
    return ENGINES[rules]


def same_bytes(eng: Engine, body: bytes, env: dict[str, str]) -> Any:
    """Send ``body`` through the cache, without it, and plainly; all three must agree."""
    rt = eng.runtime
    plain = rewrite_outbound(rt, jsonio.loads(body), env=env)
    expected = jsonio.dumps(plain.payload)
    cached = rewrite_outbound_bytes(rt, body, env=env)
    uncached = rewrite_outbound_bytes(rt, body, env=env, cache=False)
    assert cached.body == expected
    assert uncached.body == expected
    for done in (cached, uncached):
        assert list(done.renames.items()) == list(plain.renames.items())
        assert (done.registered, done.dropped) == (plain.registered, plain.dropped)
        assert (done.gate_open, done.gate_reason, done.rejected) == (
            plain.gate_open,
            plain.gate_reason,
            plain.rejected,
        )
    return cached


# ---------------------------------------------------------------- the pieces of a request
# Local names the rule sets rename, keep, shorten, drop or bind (with history operations).
NAMES = ["read", "bash", "edit", "grep", "web_search", "todo", "ls", "x.y", "Read", "mcp__pi__ls"]
name = st.sampled_from(NAMES)
text = st.sampled_from(["", "ok", "pi itself", "use tool  search", 'é ✓ \\ "q"']) | st.text(
    max_size=8
)
number = st.integers(-(2**70), 2**70) | st.floats(allow_nan=False, allow_infinity=False)

ARGS = {
    "read": st.fixed_dictionaries({"path": text}, optional={"offset": number, "limit": number}),
    "edit": st.fixed_dictionaries(
        {"path": text},
        optional={"edits": st.lists(st.fixed_dictionaries({"oldText": text, "newText": text}))},
    ),
    "bash": st.fixed_dictionaries(
        {"command": text},
        optional={"timeout": number, "_piToolGuardOriginalCommand": text},
    ),
    "grep": st.fixed_dictionaries(
        {"pattern": text}, optional={"ignoreCase": st.booleans(), "limit": number}
    ),
    "web_search": st.fixed_dictionaries(
        {"query": text}, optional={"domainFilter": st.lists(st.sampled_from(["a.io", "-b.io"]))}
    ),
    "todo": st.fixed_dictionaries(
        {
            "items": st.lists(
                st.fixed_dictionaries(
                    {"text": text, "status": st.sampled_from(["open", "done", "other"])}
                ),
                max_size=2,
            )
        }
    ),
}
ODD_ARGS = st.sampled_from([{}, "raw", [1], None]) | st.dictionaries(text, text, max_size=2)


@st.composite
def tool_use(draw: st.DrawFn) -> dict[str, Any]:
    called = draw(name)
    block: dict[str, Any] = {"type": "tool_use", "id": f"toolu_{draw(st.integers(0, 99))}"}
    block["name"] = called
    if draw(st.integers(0, 9)):  # mostly with input, shaped for the binding when there is one
        block["input"] = draw(ARGS.get(called.lower(), ODD_ARGS) | ODD_ARGS)
    return block


reference = st.builds(lambda n: {"type": "tool_reference", "tool_name": n}, name)
tool_result = st.fixed_dictionaries(
    {"type": st.just("tool_result"), "tool_use_id": st.just("toolu_1")},
    optional={
        "content": text
        | st.lists(reference | st.fixed_dictionaries({"type": st.just("text"), "text": text})),
        "name": name,
        "is_error": st.booleans(),
    },
)


def found(references: list[Any]) -> dict[str, Any]:
    """A server tool search's answer: the tools it found, as ``tool_reference`` blocks."""
    return {
        "type": "tool_search_tool_result",
        "tool_use_id": "srvtoolu_1",
        "content": {"type": "tool_search_tool_search_result", "tool_references": references},
    }


search_result = st.builds(found, st.lists(reference, max_size=3))
block = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": text}),
    st.fixed_dictionaries(
        {"type": st.just("thinking"), "thinking": text, "signature": st.just("c2ln")}
    ),
    st.just({"type": "redacted_thinking", "data": "ZGF0YQ=="}),
    tool_use(),
    tool_result,
    search_result,
    st.just(
        {
            "type": "server_tool_use",
            "id": "srvtoolu_1",
            "name": "tool_search_tool_regex",
            "input": {"query": "read"},
        }
    ),
    reference,  # out of place: passes through as it is
    st.sampled_from([{}, "x", 1, None, {"type": 5}, {"type": "tool_use", "name": 7}]),
)
message = st.one_of(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant"]), "content": st.lists(block, max_size=4)}
    ),
    st.fixed_dictionaries({"role": st.just("user"), "content": text}),
    st.sampled_from([{"role": "user"}, "loose", 7, [], {"role": "user", "content": None}]),
)

custom_tool = st.builds(
    lambda n, deferred: {
        "name": n,
        "description": "a tool",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
        **({"defer_loading": True} if deferred else {}),
    },
    name,
    st.booleans(),
)
TYPED = [
    {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"},
    {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
    {"type": "bash_20250124", "name": "bash"},
    {"type": "web_search_20250305", "name": "web_search"},
    {"type": "custom", "name": "read", "input_schema": {}},
]
PI_TOOLS = [
    {"name": n, "description": n, "input_schema": {"type": "object", "properties": {}}}
    for n in ("read", "bash", "edit", "grep", "todo", "ls")
]
TOOL_SETS = [
    PI_TOOLS,
    [*PI_TOOLS, TYPED[0]],  # tool search on: tool_reference names are renamed
    [{**t, "defer_loading": True} for t in PI_TOOLS],  # deferred tools: on too
    [*PI_TOOLS[1:], TYPED[2], TYPED[3]],  # bash and web_search typed: kept under their names
    [TYPED[1], TYPED[2], TYPED[4]],
]
tools = st.sampled_from(TOOL_SETS) | st.lists(
    custom_tool | st.sampled_from([*TYPED, "x", {"name": 5}]), max_size=5
)
tool_choice = st.sampled_from([{"type": "auto"}, {"type": "any"}, {"type": "none"}]) | st.builds(
    lambda n: {"type": "tool", "name": n}, name
)
system = text | st.lists(
    st.fixed_dictionaries(
        {"type": st.just("text"), "text": text},
        optional={"cache_control": st.just({"type": "ephemeral"})},
    ),
    max_size=2,
)
request = st.fixed_dictionaries(
    {
        "model": st.sampled_from(["claude-sonnet-4-5", "claude-opus-4-1", "claude-x", "gpt-5"]),
        "tools": tools,
    },
    optional={
        "max_tokens": st.just(32000),
        "stream": st.booleans(),
        "thinking": st.just({"type": "enabled", "budget_tokens": 1024}),
        "system": system,
        "tool_choice": tool_choice,
    },
)


def pad(size: int) -> dict[str, Any]:
    """A user message of about ``size`` bytes: what moves a body past the cache's threshold."""
    return {"role": "user", "content": [{"type": "text", "text": "p" * size}]}


SEARCH = {
    "type": "server_tool_use",
    "id": "srvtoolu_1",
    "name": "tool_search_tool_regex",
    "input": {"query": "read|todo"},
}
FOUND = found([{"type": "tool_reference", "tool_name": n} for n in ("read", "todo")])
OPENINGS: list[list[Any]] = [
    [pad(17_000)],
    [
        {"role": "user", "content": [{"type": "text", "text": "find the reader"}]},
        {"role": "assistant", "content": [SEARCH, FOUND]},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a"}},
                {  # a typed tool's name in some requests
                    "type": "tool_use",
                    "id": "toolu_2",
                    "name": "bash",
                    "input": {"command": "ls", "timeout": 1.5},
                },
                {
                    "type": "tool_use",
                    "id": "toolu_5",
                    "name": "web_search",
                    "input": {"query": "q", "domainFilter": ["a.io", "-b.io"]},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": [{"type": "tool_reference", "tool_name": "read"}],
                },
                {"type": "tool_result", "tool_use_id": "toolu_2", "name": "bash", "content": "."},
            ],
        },
        pad(16_500),
    ],
    [
        {"role": "user", "content": "edit it"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "tool search", "signature": "c2ln"},
                {
                    "type": "tool_use",
                    "id": "toolu_3",
                    "name": "edit",
                    "input": {"path": "a", "edits": [{"oldText": "x", "newText": "y"}]},
                },
                {
                    "type": "tool_use",
                    "id": "toolu_4",
                    "name": "todo",
                    "input": {"items": [{"text": "t", "status": "open"}]},
                },
            ],
        },
        pad(8_000),
    ],
]
BIG = {  # a number past 64 bits: orjson alone would make it a float
    "role": "assistant",
    "content": [{"type": "tool_use", "id": "toolu_6", "name": "read", "input": {"offset": 2**65}}],
}
OPENINGS.append([*OPENINGS[1][:2], BIG, *OPENINGS[1][2:]])


def as_sent(messages: list[Any]) -> list[Any]:
    """The messages with pi's ``cache_control`` on the newest block only."""
    out = [strip_marker(m) for m in messages]
    out[-1] = mark(out[-1])
    return out


turn = st.fixed_dictionaries(
    {
        "new": st.lists(message, min_size=1, max_size=3),
        "pad": st.sampled_from([0, 600, 6_000, 17_000]),
        "changes": request,  # the top-level fields this turn sends anew (tools, system, ...)
        "keep": st.booleans(),  # or the previous turn's
        "twin": st.none() | request,  # the same messages sent again with these fields
        "env": st.sampled_from([{}, {}, {}, {}, {}, CLOSED]),
    }
)


@pytest.mark.parametrize("rules", list(RULES))
@settings(max_examples=examples(100), suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    opening=st.sampled_from([0, 1, 1, 2, 3]),  # mostly those with every kind of rename
    first=request,
    turns=st.lists(turn, min_size=2, max_size=5),
)
def test_every_turn_of_a_conversation_matches_the_plain_path(
    rules: str, opening: int, first: dict[str, Any], turns: list[dict[str, Any]]
) -> None:
    eng = engine(rules)
    fields, history = first, list(OPENINGS[opening])
    for step in turns:
        history += step["new"]
        if step["pad"]:
            history.append(pad(step["pad"]))
        if not step["keep"]:
            fields = step["changes"]
        sent = as_sent(history)
        same_bytes(eng, jsonio.dumps({**fields, "messages": sent}), step["env"])
        if step["twin"] is not None:
            twin = jsonio.dumps({**step["twin"], "messages": sent})
            same_bytes(eng, twin, step["env"])


# ---------------------------------------------------------------- each input of the key
def conversation(turns: int) -> list[Any]:
    """An agent's history with a tool search in it, past 16 KB from the first turn."""
    messages = list(OPENINGS[1])
    for i in range(turns - 1):
        messages += [
            {"role": "assistant", "content": [{"type": "text", "text": f"turn {i}"}]},
            {"role": "user", "content": f"go on {i}"},
        ]
    return as_sent(messages)


def test_tool_references_go_out_renamed_on_every_turn_of_a_long_conversation() -> None:
    """The bug this file was written for: from the second turn on, cached history sent
    ``read`` in a ``tool_reference`` where the plain path sends ``Read``."""
    eng = bridge_rules.load()
    fields = {"model": "claude-sonnet-4-5", "tools": TOOL_SETS[1]}
    done = [
        same_bytes(eng, jsonio.dumps({**fields, "messages": conversation(n)}), {})
        for n in range(1, 6)
    ]
    assert all(d.body.count(b'"tool_name":"Read"') == 2 for d in done)
    assert b'"tool_name":"read"' not in b"".join(d.body for d in done)
    assert done[-1].reused > 0


# Two ways to send one history that rewrite it differently (their tools), and what the
# history holds beyond ``conversation(3)``.
KEY_CHANGES: dict[str, tuple[int, int, list[Any]]] = {
    "a tool search tool": (0, 1, []),  # (a typed tool, too)
    "deferred tools": (0, 2, []),  # tool search alone
    "typed tools": (0, 3, [BIG]),
}


@pytest.mark.parametrize("change", list(KEY_CHANGES))
def test_history_stored_one_way_is_rewritten_again_the_other_way(change: str) -> None:
    """Each input of a message's rewrite besides the rules is in the cache's key: history
    stored under one is rewritten again under another, and reused under its own."""
    eng = bridge_rules.load()
    one, other_way, more = KEY_CHANGES[change]
    history = as_sent([*conversation(3), *more])
    a, b = (
        jsonio.dumps({"model": "claude-x", "tools": TOOL_SETS[tools], "messages": history})
        for tools in (one, other_way)
    )
    first, stored, other, again, other_again = (
        same_bytes(eng, body, {}) for body in (a, a, b, a, b)
    )
    assert first.body != other.body  # the two ways do rewrite this history differently
    assert stored.stored == len(history)
    assert other.reused == other_again.reused == 0
    assert again.reused == len(history)
