"""The outbound message cache gives the plain path's bytes, whatever it holds.

Every check compares ``outbound_bytes`` (through the cache) with
``orjson.dumps(outbound(orjson.loads(body)).payload)`` and the result's other
fields, over the golden captures, replayed conversations and generated ones.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.budget import examples

import bridge_rules
from bridge_rules import jsonio
from bridge_rules.engine import Engine
from bridge_rules.msgcache import MessageCache, settings_from_env
from bridge_rules.transform import rewrite_outbound_bytes

CAPTURES = sorted((Path(__file__).resolve().parent.parent / "golden" / "captures").glob("*.json"))
CLOSED = {"PI_ANTHROPIC_MESSAGES_DISABLE_CANONICAL": "1"}


def fresh(**bounds: int) -> Engine:
    """An engine whose cache takes every body (no size threshold), with optional bounds."""
    engine = bridge_rules.load()
    engine.runtime.message_cache.configure(min_body=0, **bounds)
    return engine


ENG = fresh()


def same_as_plain(engine: Engine, body: bytes, env: dict[str, str] | None = None) -> Any:
    """Run ``body`` both ways, assert they agree in every field; the cached result."""
    env = {} if env is None else env
    payload = jsonio.loads(body)
    plain = engine.outbound(payload, env=env)
    cached = engine.outbound_bytes(body, env=env)
    assert cached.body == jsonio.dumps(plain.payload)
    assert list(cached.renames.items()) == list(plain.renames.items())
    assert cached.registered == plain.registered
    assert cached.dropped == plain.dropped
    assert (cached.gate_open, cached.gate_reason) == (plain.gate_open, plain.gate_reason)
    assert cached.rejected == plain.rejected
    if isinstance(payload, dict):
        assert cached.fields == {k: v for k, v in payload.items() if k != "messages"}
    return cached


def with_messages(payload: dict[str, Any], messages: list[Any]) -> bytes:
    return orjson.dumps({**payload, "messages": messages})


def pi_turns(messages: list[Any]) -> list[list[Any]]:
    """Requests as pi sends them: each one longer, ``cache_control`` on the newest message only."""
    turns = []
    for end in range(1, len(messages) + 1):
        turn = [strip_marker(m) for m in messages[:end]]
        turn[-1] = mark(turn[-1])
        turns.append(turn)
    return turns


def strip_marker(message: Any) -> Any:
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        return message
    blocks = [
        {k: v for k, v in b.items() if k != "cache_control"} if isinstance(b, dict) else b
        for b in message["content"]
    ]
    return {**message, "content": blocks}


def mark(message: Any) -> Any:
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        return message
    blocks = list(message["content"])
    if blocks and isinstance(blocks[-1], dict):
        blocks[-1] = {**blocks[-1], "cache_control": {"type": "ephemeral"}}
    return {**message, "content": blocks}


# ---------------------------------------------------------------- golden captures
@pytest.mark.parametrize("capture", CAPTURES, ids=lambda p: p.name)
def test_every_golden_capture_compact_cold_then_warm(capture: Path) -> None:
    engine = fresh()
    body = orjson.dumps(orjson.loads(capture.read_bytes()))
    assert same_as_plain(engine, body).stored == 0  # a one-off request stores nothing
    second = same_as_plain(engine, body)
    again = same_as_plain(engine, body)
    assert again.reused == second.stored > 0
    same_as_plain(engine, body, CLOSED)


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda p: p.name)
def test_every_golden_capture_as_sent_pretty_printed(capture: Path) -> None:
    """Bytes that are not orjson's compact form are never stored, and still come out right."""
    body = capture.read_bytes()
    assert same_as_plain(ENG, body).stored == 0


@pytest.mark.parametrize("capture", [c for c in CAPTURES if c.name.endswith("turn2.json")])
def test_turn_one_then_turn_two_reuses_the_shared_messages(capture: Path) -> None:
    engine = fresh()
    turn2 = orjson.loads(capture.read_bytes())
    turn1 = orjson.loads(capture.with_name(capture.name.replace("turn2", "turn1")).read_bytes())
    same_as_plain(engine, orjson.dumps(turn1))
    for turn in pi_turns(turn2["messages"]):
        same_as_plain(engine, with_messages(turn2, turn))
    same_as_plain(engine, orjson.dumps(turn2))
    assert same_as_plain(engine, orjson.dumps(turn2)).reused == len(turn2["messages"])


# ---------------------------------------------------------------- generated conversations
TOOL_NAMES = ["read", "bash", "ls", "edit", "grep", "web_search", "mcp__x__y", "Read", "x_custom"]
text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12)
args = st.dictionaries(
    st.sampled_from(["path", "command", "file_path", "pattern", "x"]),
    st.none() | st.integers(-(2**40), 2**40) | st.floats(allow_nan=False) | text,
    max_size=3,
)
block = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": text}),
    st.fixed_dictionaries(
        {"type": st.just("tool_use"), "id": text, "name": st.sampled_from(TOOL_NAMES)},
        optional={"input": args},
    ),
    st.fixed_dictionaries(
        {"type": st.just("tool_result"), "tool_use_id": text},
        optional={"content": text, "name": st.sampled_from(TOOL_NAMES)},
    ),
    st.sampled_from([{}, "x", 1, None]),
)
message = st.one_of(
    st.fixed_dictionaries(
        {
            "role": st.sampled_from(["user", "assistant"]),
            "content": st.lists(block, max_size=4) | text,
        }
    ),
    st.sampled_from([{"role": "user"}, "loose", 7, []]),
)
tool = st.one_of(
    st.fixed_dictionaries(
        {"name": st.sampled_from(TOOL_NAMES)}, optional={"input_schema": st.just({})}
    ),
    st.sampled_from(
        [
            {"type": "bash_20250124", "name": "bash"},
            {"type": "web_search_20250305", "name": "web_search"},
        ]
    ),
)
request = st.fixed_dictionaries(
    {
        "model": st.sampled_from(["claude-sonnet-4-5", "gpt-5"]),
        "tools": st.lists(tool, max_size=4),
        "max_tokens": st.just(1024),
    },
    optional={"system": text, "stream": st.booleans()},
)


@settings(max_examples=examples(120), suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(request, st.lists(message, min_size=1, max_size=12), st.data())
def test_generated_conversations_replayed_turn_by_turn(
    payload: dict[str, Any], messages: list[Any], data: st.DataObject
) -> None:
    """One cache for every example: what earlier conversations left must never leak in."""
    for turn in pi_turns(messages):
        if data.draw(st.booleans(), label="tools change this turn"):
            payload = {**payload, "tools": data.draw(st.lists(tool, max_size=3))}
        same_as_plain(ENG, with_messages(payload, turn))


@settings(max_examples=examples(60), suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(request, st.lists(message, min_size=2, max_size=10), st.integers(0, 9))
def test_an_edited_earlier_message_is_rewritten_again(
    payload: dict[str, Any], messages: list[Any], at: int
) -> None:
    same_as_plain(ENG, with_messages(payload, messages))
    edited = list(messages)
    edited[at % len(edited)] = {"role": "user", "content": [{"type": "text", "text": "edited"}]}
    same_as_plain(ENG, with_messages(payload, edited))


# ---------------------------------------------------------------- traps
CONVERSATION = [
    {"role": "user", "content": [{"type": "text", "text": "look"}]},
    {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "t1", "name": "read", "input": {"path": "a"}}],
    },
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]},
    {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "t2", "name": "bash", "input": {"command": "ls"}}],
    },
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "y"}]},
    {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "t3", "name": "ls", "input": {"path": "."}}],
    },
]
BASE = {"model": "claude-sonnet-4-5", "max_tokens": 100, "tools": [{"name": "read"}]}


def test_a_nested_messages_array_before_the_real_one_is_not_taken_for_it() -> None:
    engine = fresh()
    same_as_plain(engine, with_messages(BASE, CONVERSATION))
    decoy = {**BASE, "metadata": {"messages": CONVERSATION[:4]}}
    assert orjson.dumps(decoy).index(b'"messages":[') < len(orjson.dumps(decoy)) - 5
    body = orjson.dumps({"metadata": decoy["metadata"], **BASE, "messages": CONVERSATION})
    same_as_plain(engine, body)


def test_typed_tools_appearing_later_change_cached_history() -> None:
    engine = fresh()
    same_as_plain(engine, with_messages(BASE, CONVERSATION))
    typed = {**BASE, "tools": [{"type": "bash_20250124", "name": "bash"}]}
    cached = same_as_plain(engine, with_messages(typed, CONVERSATION))
    assert b'"name":"bash"' in cached.body
    same_as_plain(engine, with_messages(BASE, CONVERSATION))


def test_bodies_that_are_not_objects_or_not_json() -> None:
    engine = fresh()
    same_as_plain(engine, with_messages(BASE, CONVERSATION))
    good = with_messages(BASE, CONVERSATION)
    for bad in (good[:-1], good + b"x", good.replace(b'"max_tokens":100', b'"max_tokens":')):
        with pytest.raises(orjson.JSONDecodeError):
            orjson.loads(bad)
        with pytest.raises(orjson.JSONDecodeError):
            engine.outbound_bytes(bad, env={})
    for odd in (
        b"[1,2]",
        b'{"a":{"messages":[1]}}',
        b"null",
        b'{"messages":[]}',
        b'{"messages":7}',
    ):
        same_as_plain(engine, odd)
    wrapped = b'[{"messages":[' + good.split(b'"messages":[', 1)[1] + b"]"
    plain = orjson.dumps(engine.outbound(orjson.loads(wrapped), env={}).payload)
    assert engine.outbound_bytes(wrapped, env={}).body == plain


def test_every_truncation_and_splice_of_a_cached_body() -> None:
    """Cut, glued to junk or with a byte replaced, a body the cache knows fails or passes
    exactly as orjson says, and passes with the plain path's bytes."""
    engine = fresh()
    good = with_messages(BASE, CONVERSATION)
    for _ in range(3):
        same_as_plain(engine, good)
    for end in range(len(good)):
        variants = [good[:end], good[:end] + b"]}", good[:end] + b",{}]}"]
        variants += [good[:end] + c + good[end + 1 :] for c in (b",", b"]", b"}", b'"', b" ")]
        for bad in variants:
            try:
                orjson.loads(bad)
            except orjson.JSONDecodeError:
                with pytest.raises(orjson.JSONDecodeError):
                    engine.outbound_bytes(bad, env={})
            else:
                same_as_plain(engine, bad)


def test_a_body_holding_the_cut_marker_is_handled_plainly() -> None:
    from bridge_rules.transform import splice

    engine = fresh()
    same_as_plain(engine, with_messages(BASE, CONVERSATION))
    body = with_messages({**BASE, "system": splice._MARK}, CONVERSATION)
    same_as_plain(engine, body)


def test_new_rules_never_see_old_rewrites(tmp_path: Path) -> None:
    body = with_messages(BASE, CONVERSATION)
    default = fresh()
    first = same_as_plain(default, body)
    path = tmp_path / "other.yaml"
    path.write_text(
        "bridge-rules: 1\nname: other\ngate: {api: anthropic-messages}\n"
        "names:\n  - kind: prefix\n    value: mcp__other__\n",
        encoding="utf-8",
    )
    other = bridge_rules.load(str(path))
    other.runtime.message_cache.configure(min_body=0)
    second = same_as_plain(other, body)
    assert first.body != second.body
    assert second.reused == 0


# ---------------------------------------------------------------- switch and bounds
def test_switches() -> None:
    assert settings_from_env({"BRIDGE_RULES_OUTBOUND_CACHE": "off"})[0] is False
    assert settings_from_env({"BRIDGE_RULES_OUTBOUND_CACHE": "0"})[0] is False
    assert settings_from_env({"BRIDGE_RULES_OUTBOUND_CACHE": "16"}) == (True, 16 * 1024 * 1024)
    assert settings_from_env({})[0] is True
    assert MessageCache.from_env({"BRIDGE_RULES_OUTBOUND_CACHE": "off"}).enabled is False
    engine = fresh()
    body = with_messages(BASE, CONVERSATION)
    assert engine.outbound_bytes(body, env={}, cache=False).stored == 0
    assert engine.runtime.message_cache.stats()["entries"] == 0
    assert same_as_plain(engine, body).stored == 0
    assert same_as_plain(engine, body).stored == len(CONVERSATION)
    engine.runtime.message_cache.configure(enabled=False)
    assert engine.runtime.message_cache.stats() == {"entries": 0, "bytes": 0}
    assert same_as_plain(engine, body).reused == 0
    engine.runtime.message_cache.configure(enabled=True, min_body=len(body) + 1)
    assert same_as_plain(engine, body).stored == 0


def test_bounds_evict_the_newest_messages_first() -> None:
    engine = fresh(max_entries=4)
    messages = CONVERSATION * 3
    for turn in pi_turns(messages):
        same_as_plain(engine, with_messages(BASE, turn))
    stats = engine.runtime.message_cache.stats()
    assert stats["entries"] <= 4
    again = same_as_plain(engine, with_messages(BASE, pi_turns(messages)[-1]))
    assert again.reused >= 1  # the conversation's head survived
    small = fresh(max_bytes=600)
    for turn in pi_turns(messages):
        same_as_plain(small, with_messages(BASE, turn))
    assert small.runtime.message_cache.stats()["bytes"] <= 600


def test_threads_share_one_cache() -> None:
    engine = fresh(max_entries=64)
    convs = [
        [{**m, "role": m["role"]} for m in CONVERSATION]
        + [{"role": "user", "content": [{"type": "text", "text": f"conv {i}"}]}]
        for i in range(4)
    ]
    bodies = [with_messages(BASE, turn) for conv in convs for turn in pi_turns(conv)]
    expected = {b: orjson.dumps(engine.outbound(orjson.loads(b), env={}).payload) for b in bodies}
    failures: list[bytes] = []

    def work(offset: int) -> None:
        for i in range(300):
            body = bodies[(i * 7 + offset) % len(bodies)]
            if engine.outbound_bytes(body, env={}).body != expected[body]:
                failures.append(body)

    in_threads(work, 6)
    assert failures == []


def in_threads(work: Callable[[int], None], count: int) -> None:
    """``work(0)`` .. ``work(count - 1)`` at once, one thread each; back when all are done."""
    threads = [threading.Thread(target=work, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def test_a_long_conversation_is_matched_in_a_few_steps() -> None:
    engine = fresh()
    messages = [
        {
            "role": "assistant" if i % 2 else "user",
            "content": [
                {"type": "text", "text": f"turn {i}"},
                *([{"type": "tool_use", "id": f"t{i}", "name": "read", "input": {}}] * (i % 2)),
            ],
        }
        for i in range(161)
    ]
    turns = pi_turns(messages)
    for turn in turns[::2]:
        same_as_plain(engine, with_messages(BASE, turn))
    body = with_messages(BASE, turns[-1])
    store = engine.runtime.message_cache
    start = body.index(b'"messages":[') + len(b'"messages":[')
    matched, _rest = store.match(body, start)
    assert sum(e.count for e in matched) == len(messages)
    assert len(matched) <= 32


def _exact_loads(raw: bytes) -> Any:
    return json.loads(raw)


def _exact_dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def test_big_integers_stay_exact_in_stored_messages() -> None:
    """The one codec reads big integers exactly; stored messages then hold them exactly too,
    and a closed gate sends the body's own bytes."""
    big = 2**70 + 1
    messages = [
        *CONVERSATION[:3],
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t9", "name": "read", "input": {"n": big}}],
        },
        *CONVERSATION[3:],
    ]
    body = _exact_dumps({**BASE, "messages": messages})
    expected = _exact_dumps(ENG.outbound(_exact_loads(body), env={}).payload)
    assert str(big).encode() in expected
    results = [same_as_plain(ENG, body) for _ in range(3)]
    assert [r.body for r in results] == [expected] * 3
    assert results[-1].reused == len(messages)
    closed = rewrite_outbound_bytes(ENG.runtime, body, env=CLOSED)
    assert closed.body == _exact_dumps(_exact_loads(body))


def test_a_conversation_bigger_than_the_cache_keeps_its_head_cached() -> None:
    engine = fresh(max_bytes=180_000)
    messages = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"{i:04d}" + "x" * 2000}
        for i in range(60)
    ]
    turns = pi_turns(messages)
    for turn in turns:
        same_as_plain(engine, with_messages(BASE, turn))
    last = same_as_plain(engine, with_messages(BASE, turns[-1]))
    assert last.reused >= 40  # the head the cap holds (~43 messages of 2 KB in and out)
    assert engine.runtime.message_cache.stats()["bytes"] <= 180_000


def test_default_settings_cache_a_conversation_from_16_kb() -> None:
    """The proxy's defaults: turns under ``min_body`` go the plain way; an agent's
    conversation is reused from the turn after it passes 16 KB, well before 64 KB."""
    engine = bridge_rules.load()
    floor = engine.runtime.message_cache.min_body
    messages: list[Any] = [{"role": "user", "content": "go"}]
    seen: list[tuple[int, int]] = []
    for i in range(40):
        call = {"type": "tool_use", "id": f"toolu_{i}", "name": "read", "input": {"path": f"{i}"}}
        result = {"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": "line\n" * 100}
        messages = [
            *messages,
            {"role": "assistant", "content": [call]},
            {"role": "user", "content": [result]},
        ]
        body = with_messages(BASE, messages)
        done = same_as_plain(engine, body)
        seen.append((len(body), done.reused))
        if len(body) >= 24 * 1024:
            break
    assert all(reused == 0 for size, reused in seen if size < floor)
    assert any(reused > 0 for size, reused in seen if size < 24 * 1024)
