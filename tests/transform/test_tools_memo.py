"""A request's ``tools`` array, remembered: the same bytes and outcome as rewriting it anew.

Agents send the same tools on every turn. ``outbound_bytes`` keeps the last few
arrays it saw (by their bytes) with what they decided, and cuts a known array
out of the next body before parsing. Every check here compares with the plain
path (``same_as_plain``), and most also check that the memo was used.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.budget import examples
from tests.transform.test_cache import (
    CLOSED,
    CONVERSATION,
    fresh,
    in_threads,
    message,
    same_as_plain,
    tool,
)

import bridge_rules
from bridge_rules.engine import Engine
from bridge_rules.msgcache import TOOLS_BYTES, TOOLS_ENTRIES, ToolsEntry, ToolsMemo

PI_TOOLS = [
    {
        "name": name,
        "description": f"The {name} tool.",
        "input_schema": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
    }
    for name in ("read", "bash", "edit", "write")
]
MODEL = "claude-sonnet-4-5"
SMALL = {"model": MODEL, "max_tokens": 100, "tools": PI_TOOLS}


def body_of(payload: dict[str, Any], messages: list[Any] = CONVERSATION) -> bytes:
    """Compact, like ``JSON.stringify``, with the tools after the messages, as pi sends them."""
    head = {k: v for k, v in payload.items() if k != "tools"}
    return orjson.dumps({**head, "messages": messages, "tools": payload["tools"]})


def rules(tmp_path: Path, name: str, text: str) -> Engine:
    """An engine on a rule file of ``text`` after the usual header."""
    path = tmp_path / f"{name}.yaml"
    header = f"bridge-rules: 1\nname: {name}\ngate: {{api: anthropic-messages}}\n"
    path.write_text(header + text, encoding="utf-8")
    return bridge_rules.load(str(path))


def default_engine() -> Engine:
    """The proxy's settings: small bodies skip the message cache, but not the tools memo."""
    return bridge_rules.load()


def test_a_small_request_reuses_its_tools_from_the_second_turn() -> None:
    engine = default_engine()
    body = body_of(SMALL)
    assert len(body) < engine.runtime.message_cache.min_body
    first = same_as_plain(engine, body)
    second = same_as_plain(engine, body)
    assert (first.tools_reused, second.tools_reused) == (False, True)
    assert (second.reused, second.stored) == (0, 0)  # the messages went the plain way
    assert b'"name":"Read"' in second.body
    longer = body_of(SMALL, [*CONVERSATION, {"role": "user", "content": "go on"}])
    assert same_as_plain(engine, longer).tools_reused


def test_tools_and_messages_are_both_cut_from_one_body() -> None:
    engine = fresh()
    body = body_of(SMALL)
    for _ in range(2):
        same_as_plain(engine, body)
    third = same_as_plain(engine, body)
    assert third.tools_reused
    assert third.reused == len(CONVERSATION)
    tools_first = orjson.dumps({**SMALL, "messages": CONVERSATION})  # tools before messages
    for _ in range(3):
        out = same_as_plain(engine, tools_first)
    assert out.tools_reused
    assert out.reused == len(CONVERSATION)


def test_other_tools_are_not_taken_for_remembered_ones() -> None:
    engine = default_engine()
    same_as_plain(engine, body_of(SMALL))
    variants = [
        [*PI_TOOLS, {"name": "grep"}],
        PI_TOOLS[:3],
        [{**PI_TOOLS[0], "name": "web_search"}, *PI_TOOLS[1:]],
        [{"type": "bash_20250124", "name": "bash"}, *PI_TOOLS],
    ]
    for tools in variants:
        assert not same_as_plain(engine, body_of({**SMALL, "tools": tools})).tools_reused
    for tools in variants:  # each is remembered in its turn, and all fit
        assert same_as_plain(engine, body_of({**SMALL, "tools": tools})).tools_reused
    assert same_as_plain(engine, body_of(SMALL)).tools_reused


def test_values_python_calls_equal_keep_their_own_bytes() -> None:
    """``1 == 1.0 == True`` in Python; the memo goes by bytes, so each keeps its own."""
    engine = default_engine()
    for value in (1, 1.0, True, 1, True, 1.0):
        tools = [{"name": "x_custom", "input_schema": {"type": "object", "x": value}}]
        out = same_as_plain(engine, body_of({**SMALL, "tools": tools}))
        assert orjson.dumps(value) in out.body


def test_a_decoy_tools_array_inside_the_messages_is_not_cut() -> None:
    """The remembered array also stands inside a tool call's input, before the real (other)
    tools: the cut must parse as the top-level ``tools`` or it is abandoned."""
    engine = default_engine()
    same_as_plain(engine, body_of(SMALL))
    decoy = [
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "t9", "name": "bash", "input": {"tools": PI_TOOLS}}
            ],
        }
    ]
    other = {**SMALL, "tools": [{"name": "ls"}]}
    body = body_of(other, decoy)
    assert body.count(orjson.dumps(PI_TOOLS)) == 1
    assert not same_as_plain(engine, body).tools_reused
    assert same_as_plain(engine, body).tools_reused  # its own tools, from the second time
    nested_only = orjson.dumps({**SMALL, "metadata": {"tools": PI_TOOLS}, "messages": []})
    same_as_plain(engine, nested_only)


def test_a_nested_array_exactly_where_the_tools_stood_is_not_taken_for_them() -> None:
    """The memo tries an array where it stood before, from the start and from the end; a
    nested copy padded to stand exactly there is cut, but the cut must parse as the
    top-level ``tools``, so it is abandoned and the body's own tools are used."""
    engine = default_engine()
    remembered = orjson.dumps(PI_TOOLS)
    other = [{"name": "ls"}]
    first = orjson.dumps({"model": MODEL, "tools": PI_TOOLS, "messages": CONVERSATION})
    head = first.index(remembered)
    opening = b'{"a":{"'  # then the padding key, then ":0,"tools": and the copy
    pad = "p" * (head - len(opening) - len(b'":0,"tools":'))
    decoy = {"a": {pad: 0, "tools": PI_TOOLS}, "model": MODEL, "tools": other}
    second = orjson.dumps({**decoy, "messages": CONVERSATION})
    assert second.index(remembered) == head
    last = orjson.dumps(
        {"model": MODEL, "messages": CONVERSATION, "tools": PI_TOOLS, "stream": False}
    )
    tail = len(last) - last.index(remembered)
    closing = len(b',"q":""}}')  # after the copy: its padding field, then two braces
    at_end = {"model": MODEL, "tools": other, "messages": CONVERSATION}
    third = orjson.dumps(
        {**at_end, "z": {"tools": PI_TOOLS, "q": "q" * (tail - len(remembered) - closing)}}
    )
    assert len(third) - third.rindex(remembered) == tail
    for body in (first, last):
        same_as_plain(engine, body)
        assert same_as_plain(engine, body).tools_reused
    for body in (second, third):
        out = same_as_plain(engine, body)
        assert not out.tools_reused
        assert out.registered == ["ls"]


def test_a_body_holding_the_tools_marker_is_handled_plainly() -> None:
    from bridge_rules.transform import splice

    engine = default_engine()
    same_as_plain(engine, body_of(SMALL))
    body = body_of({**SMALL, "system": splice._TOOLS_MARK})
    assert same_as_plain(engine, body).tools_reused
    odd = orjson.dumps({**SMALL, "tools": splice._TOOLS_MARK, "messages": []})
    same_as_plain(engine, odd)


def test_pretty_printed_tools_are_never_remembered() -> None:
    engine = default_engine()
    body = orjson.dumps({**SMALL, "messages": CONVERSATION}, option=orjson.OPT_INDENT_2)
    for _ in range(3):
        assert not same_as_plain(engine, body).tools_reused
    assert len(engine.runtime.message_cache.tools) == 0


def test_the_wire_name_guard_is_remembered_too(tmp_path: Path) -> None:
    """A refusal and a collision's dropped tool come out the same from the memo."""
    aliases = "names:\n  - kind: aliases\n    map: {read: Read, open: Read}\n"
    refuse = rules(tmp_path, "guard", aliases)
    clash = {**SMALL, "tools": [{"name": "read"}, {"name": "open"}]}
    bad_name = {**SMALL, "tools": [{"name": "has.dot"}]}
    for payload in (clash, bad_name):
        first = same_as_plain(refuse, body_of(payload))
        second = same_as_plain(refuse, body_of(payload))
        assert second.tools_reused
        assert second.rejected == first.rejected
        assert first.rejected
        assert "bridge-rules refused the request" in first.rejected
    keep = rules(tmp_path, "first", aliases + "wire_names: {on_collision: first}\n")
    for _ in range(2):
        out = same_as_plain(keep, body_of(clash))
    assert out.tools_reused
    assert out.dropped == ["open"]
    assert out.registered == ["read"]
    assert out.rejected is None


def test_tool_search_references_follow_remembered_tools() -> None:
    engine = default_engine()
    tools = [{"type": "tool_search_tool_regex_20251119", "name": "tool_search"}, *PI_TOOLS]
    history = [
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "s1",
                    "content": [{"type": "tool_reference", "tool_name": "read"}],
                }
            ],
        }
    ]
    for _ in range(2):
        out = same_as_plain(engine, body_of({**SMALL, "tools": tools}, history))
    assert out.tools_reused
    assert b'"tool_name":"Read"' in out.body


def test_a_closed_gate_sends_remembered_tools_as_they_came() -> None:
    engine = default_engine()
    body = body_of(SMALL)
    same_as_plain(engine, body)
    closed = same_as_plain(engine, body, CLOSED)
    assert closed.tools_reused
    assert not closed.gate_open
    assert orjson.dumps(PI_TOOLS) in closed.body


def test_switched_off_or_asked_not_to_the_memo_is_not_used() -> None:
    engine = default_engine()
    body = body_of(SMALL)
    same_as_plain(engine, body)
    assert not engine.outbound_bytes(body, env={}, cache=False).tools_reused
    engine.runtime.message_cache.configure(enabled=False)
    assert len(engine.runtime.message_cache.tools) == 0
    for _ in range(2):
        assert not same_as_plain(engine, body).tools_reused


def test_new_rules_start_with_an_empty_memo(tmp_path: Path) -> None:
    body = body_of(SMALL)
    default = default_engine()
    for _ in range(2):
        same_as_plain(default, body)
    other = rules(tmp_path, "other", "names:\n  - kind: prefix\n    value: mcp__other__\n")
    first = same_as_plain(other, body)
    assert not first.tools_reused
    assert b'"name":"mcp__other__read"' in first.body


KEY = b'"tools":'


def entry(raw: bytes, context: object = None) -> ToolsEntry:
    return ToolsEntry(raw, None, None, context, len(KEY), 1)


def held(memo: ToolsMemo, raw: bytes, context: object = None) -> bool:
    return memo.find(KEY + raw + b"}", KEY, context) is not None


def test_the_memo_is_bounded_by_entries_and_bytes() -> None:
    memo = ToolsMemo()
    for i in range(TOOLS_ENTRIES + 3):
        memo.add(entry(b"[%d]" % i))
    assert len(memo) == TOOLS_ENTRIES
    assert not held(memo, b"[0]")  # the least recently used left
    newest = b"[%d]" % (TOOLS_ENTRIES + 2)
    assert held(memo, newest)
    assert not held(memo, newest, "another codec")
    huge = b"[" + b"0," * (TOOLS_BYTES // 2) + b"0]"
    memo.add(entry(huge))
    assert not held(memo, huge)
    half = b"[" + b"1," * (TOOLS_BYTES // 4) + b"1]"
    memo.add(entry(half))
    memo.add(entry(half.replace(b"1", b"2")))
    assert not held(memo, half)  # two halves and more do not fit
    assert held(memo, half.replace(b"1", b"2"))


def test_the_memo_looks_only_where_the_tools_stood() -> None:
    """From the start when what precedes the tools stays, from the end when what follows
    does; an array met elsewhere, or not after the key, is not found there."""
    head, tail = b'{"a":0,' + KEY, b"}}"
    memo = ToolsMemo()
    memo.add(ToolsEntry(b"[1]", None, None, None, len(head), len(b"[1]" + tail)))
    assert memo.find(head + b"[1],...whatever}", KEY, None)  # the same head
    assert memo.find(b"{...a longer head...," + KEY + b"[1]" + tail, KEY, None)  # same tail
    assert memo.find(b"{" + KEY + b"[1],...........}", KEY, None) is None  # neither
    assert memo.find(b'{"a":0,"other":[1]}}', KEY, None) is None  # not after the key
    assert memo.find(b"[1]}}", KEY, None) is None  # the key would stand before the body
    memo.add(ToolsEntry(b"[1]", None, None, None, len(b"{" + KEY), 99))
    assert len(memo) == 1  # the same array, remembered where it stood last
    assert memo.find(b"{" + KEY + b"[1],...........}", KEY, None)


def test_tools_are_found_in_a_growing_conversation_either_side_of_it() -> None:
    engine = default_engine()
    turns = [CONVERSATION[:n] for n in range(1, len(CONVERSATION) + 1)]
    after = [body_of(SMALL, turn) for turn in turns]
    before = [orjson.dumps({**SMALL, "messages": turn}) for turn in turns]
    for bodies in (after, before):
        reused = [same_as_plain(engine, body).tools_reused for body in bodies]
        assert reused[1:] == [True] * (len(bodies) - 1)
    assert len(engine.runtime.message_cache.tools) == 1


def test_threads_share_one_memo() -> None:
    engine = default_engine()
    bodies = [body_of({**SMALL, "tools": PI_TOOLS[:n]}) for n in range(1, 5)]
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            for i in range(40):
                same_as_plain(engine, bodies[(i + k) % len(bodies)])
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    in_threads(work, 4)
    assert errors == []
    assert all(same_as_plain(engine, body).tools_reused for body in bodies)


@pytest.mark.parametrize("position", ["after", "before"])
def test_a_thousand_tools_come_from_the_memo(position: str) -> None:
    tools = [
        {"name": f"mcp__srv__tool_{i}", "input_schema": {"type": "object", "properties": {}}}
        for i in range(1000)
    ]
    engine = default_engine()
    if position == "after":
        body = body_of({**SMALL, "tools": tools})
    else:
        body = orjson.dumps({**SMALL, "tools": tools, "messages": CONVERSATION})
    assert not same_as_plain(engine, body).tools_reused
    assert same_as_plain(engine, body).tools_reused


def test_the_proxys_exact_codec_keeps_big_integers_in_remembered_tools() -> None:
    """A big integer in a tool's schema survives the memo exactly (the one codec)."""
    from bridge_rules import jsonio
    from bridge_rules.transform import rewrite_outbound_bytes

    engine = default_engine()
    big = 2**70 + 1
    tools = [{"name": "x_custom", "input_schema": {"type": "object", "maximum": big}}]
    body = jsonio.dumps({**SMALL, "messages": CONVERSATION, "tools": tools})
    expected = jsonio.dumps(engine.outbound(jsonio.loads(body), env={}).payload)
    assert str(big).encode() in expected
    exact = [rewrite_outbound_bytes(engine.runtime, body, env={}) for _ in range(3)]
    assert [r.body for r in exact] == [expected] * 3
    assert [r.tools_reused for r in exact] == [False, True, True]


def test_a_smaller_cache_keeps_fewer_tools() -> None:
    """The tools take at most a quarter of the cache's byte bound, shrunk at once."""
    engine = default_engine()
    body = body_of(SMALL)
    same_as_plain(engine, body)
    store = engine.runtime.message_cache
    assert len(store.tools) == 1
    assert store.tools.max_bytes == TOOLS_BYTES
    store.configure(max_bytes=4 * len(orjson.dumps(PI_TOOLS)) - 4)  # a quarter: just too small
    assert len(store.tools) == 0
    assert not same_as_plain(engine, body).tools_reused
    store.configure(max_bytes=4 * len(orjson.dumps(PI_TOOLS)))
    same_as_plain(engine, body)
    assert same_as_plain(engine, body).tools_reused


GENERATED = fresh()  # one engine for every example: what one example leaves, others meet
toolsets = st.lists(tool, max_size=4)
layout = st.sampled_from(["tools first", "tools last", "tools between", "tools at the end"])
decoy = st.fixed_dictionaries(
    {
        "role": st.just("assistant"),
        "content": st.lists(
            st.fixed_dictionaries(
                {
                    "type": st.just("tool_use"),
                    "id": st.just("d"),
                    "name": st.sampled_from(["bash", "x_custom"]),
                    "input": st.fixed_dictionaries({"tools": toolsets}),
                }
            ),
            min_size=1,
            max_size=2,
        ),
    }
)


def laid_out(how: str, tools: list[Any], messages: list[Any]) -> bytes:
    head = {"model": "claude-sonnet-4-5", "max_tokens": 64}
    if how == "tools first":
        return orjson.dumps({**head, "tools": tools, "messages": messages})
    if how == "tools last":
        return orjson.dumps({**head, "messages": messages, "tools": tools})
    if how == "tools between":
        return orjson.dumps({**head, "system": "s", "tools": tools, "messages": messages})
    return orjson.dumps({**head, "messages": messages, "tools": tools, "stream": False})


@settings(max_examples=examples(150), suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    st.lists(
        st.tuples(layout, toolsets, st.lists(message | decoy, min_size=1, max_size=4)),
        min_size=1,
        max_size=6,
    ),
    st.data(),
)
def test_generated_layouts_decoys_and_changing_tools(
    turns: list[tuple[str, list[Any], list[Any]]], data: st.DataObject
) -> None:
    """Tools before, after or between other fields, decoy ``tools`` arrays inside tool calls
    (often the very array another example sent), and tools that change or come back: every
    request gives the plain path's bytes."""
    history: list[Any] = []
    for how, tools, new in turns:
        history = [*history, *new]
        body = laid_out(how, tools, history)
        for _ in range(data.draw(st.integers(1, 2), label="times sent")):
            same_as_plain(GENERATED, body)
