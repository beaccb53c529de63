"""``proxy.strict``'s quick path over a run of events never passes what reading it event by
event refuses (a differential property over generated runs, damaged or not: two values on
one data line, a blank data line, a value cut across two events), and passes the shape
every Anthropic endpoint sends. From the client's side: a stream whose events only a
reader of the first value would read gives no such reader a denied call through ``serve``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest
from anthropic._streaming import SSEDecoder
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.budget import examples
from tests.hostile.http_kit import REQUEST, proxies, upstream
from tests.hostile.test_fail_closed import POLICY, TOOLS, events
from tests.proxy import loopback

from bridge_rules.proxy.strict import Unreadable, _plainly_read, checked, event_problem
from bridge_rules.transform.framing import framed

TYPES = ["message_start", "content_block_start", "content_block_delta", "ping", "error"]
SCALARS = st.one_of(st.integers(-(2**70), 2**70), st.text(max_size=8), st.booleans(), st.none())
DAMAGE = ["", "NaN", "1e999", '"\\ud800"', '"\xff"', "[1,]", '{"type":"ping"},{"type":"ping"}']
# A whole event's data: two values, with or without a space (a reader of values one after
# another takes both), or none (the values of the run then still number its events).
TWICE = ['{"type":"%s"}{"type":"%s"}', '{"type":"%s"} {"type":"%s"}', "", " ", "\t"]


@st.composite
def event(draw: st.DrawFn) -> bytes:
    name = draw(st.sampled_from(TYPES))
    data = {"type": draw(st.sampled_from([name, name, *TYPES])), "v": draw(SCALARS)}
    text = json.dumps(data, ensure_ascii=draw(st.booleans()))
    damage = draw(st.sampled_from(DAMAGE + [None] * 6))
    if damage is not None:
        text = text.replace('"v": ', '"v": ' + damage + ", " if damage else '"v": ', 1)
        if damage.startswith("{"):
            text = damage
    if draw(st.booleans()):
        text = text[:-1] + ', "type": "' + draw(st.sampled_from(TYPES)) + '"}'
    twice = draw(st.sampled_from(TWICE + [None] * 10))
    if twice is not None:
        text = twice % (name, draw(st.sampled_from(TYPES))) if "%" in twice else twice
    raw = text.encode("utf-8", "surrogatepass").replace("\xff".encode(), b"\xff")  # a raw byte
    return b"event: " + name.encode() + b"\ndata: " + raw + b"\n\n"


@st.composite
def cut(draw: st.DrawFn) -> bytes:
    """Two events whose data, read one value after another, are the events' types: an
    object cut anywhere between the first event and the second, the second event's own
    object after it."""
    first, second = draw(st.sampled_from(TYPES)), draw(st.sampled_from(TYPES))
    whole = json.dumps({"type": first, "v": draw(SCALARS)}, separators=(",", ":"))
    at = draw(st.integers(1, len(whole) - 1))
    tail = whole[at:] + draw(st.sampled_from(["", " "])) + json.dumps({"type": second})
    return b"".join(
        b"event: " + name.encode() + b"\ndata: " + data.encode() + b"\n\n"
        for name, data in ((first, whole[:at]), (second, tail))
    )


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(event() | cut(), min_size=1, max_size=6))
def test_the_quick_path_passes_only_what_each_event_passes(events: list[bytes]) -> None:
    run = framed(b"".join(events), False)
    if _plainly_read(run):
        assert all(event_problem(e) is None for e in run.events())


def test_the_common_shape_takes_the_quick_path() -> None:
    run = framed(
        b'event: message_start\ndata: {"type":"message_start","message":{}}\n\n'
        b'event: ping\ndata: {"type": "ping"}\n\n',
        False,
    )
    assert _plainly_read(run)


RUNS_OF_VALUES = {
    "two-then-none": b'event: a\ndata: {"type":"a"}{"type":"b"}\n\nevent: b\ndata: \n\n',
    "two-spaced-then-blank": b'event: a\ndata: {"type":"a"} {"type":"b"}\n\nevent: b\ndata:  \n\n',
    "cut-across": b'event: a\ndata: {"type":\n\nevent: b\ndata: "a"} {"type":"b"}\n\n',
}


@pytest.mark.parametrize("data", list(RUNS_OF_VALUES.values()), ids=list(RUNS_OF_VALUES))
def test_values_that_number_the_events_but_not_one_an_event_are_read_event_by_event(
    data: bytes,
) -> None:
    """Read one value after another these runs' data are the events' types, which the
    quick path took for one value an event; each event's own data is not JSON."""
    run = framed(data, False)
    assert [event_problem(e) is not None for e in run.events()] == [True, True]
    assert not _plainly_read(run)

    async def through() -> None:
        async for _ in checked(_one(run)):
            pass

    with pytest.raises(Unreadable, match="not JSON"):
        asyncio.run(through())


async def _one(run: bytes) -> AsyncIterator[bytes]:
    yield run


# ------------------------------------------------------------------ through serve
def first_value_calls(body: bytes) -> list[str]:
    """Tool names a client gets that reads the first JSON value of each event's data and
    leaves the rest (as a streaming JSON decoder does), after the SDK's own SSE decoder."""
    names: list[str] = []
    for sse in SSEDecoder().iter_bytes(iter([body])):
        if sse.event == "error":
            break
        try:
            data, _ = json.JSONDecoder().raw_decode(sse.data)
        except ValueError:
            continue
        block = data.get("content_block") if isinstance(data, dict) else None
        if isinstance(block, dict) and block.get("type") == "tool_use":
            names.append(str(block.get("name")))
    return names


@pytest.mark.parametrize("how", ["joined", "spaced"])
def test_a_denied_call_with_a_second_value_on_its_data_line_is_not_passed_on(how: str) -> None:
    """Under ``no_exec`` the proxy cannot read the call's event, so it must not pass it on:
    it passed it, untouched, when the run's values numbered its events."""
    tail = b"" if how == "joined" else b" "
    body = b""
    for e in events("Bash"):
        data = json.dumps(e, separators=(",", ":")).encode()
        if e["type"] == "content_block_start":
            data += tail + b'{"type":"ping"}\n\nevent: ping\ndata: ' + tail
        body += b"event: " + e["type"].encode() + b"\ndata: " + data + b"\n\n"
    assert first_value_calls(body) == ["Bash"]  # the oracle reads the call upstream sent
    with upstream() as up, proxies() as make:
        up.reply.body, up.reply.content_type = [body], "text/event-stream"
        payload = {**REQUEST, "tools": TOOLS, "stream": True}
        got = loopback.post(make(up.url) + "/v1/messages", json=payload, headers=POLICY).content
    assert not {"Bash", "bash"} & set(first_value_calls(got)), got[:600]
    assert b"event: error" in got, got[-400:]
    assert b"not JSON" in got, got[-400:]
