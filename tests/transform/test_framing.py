"""SSE framing: events cut once, as the SSE format cuts them, in linear time and memory."""

from __future__ import annotations

import itertools
import re
import tracemalloc
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.transform.test_sse import REGISTERED, run, start, stop, text_delta

from bridge_rules.engine import Engine
from bridge_rules.transform import framing
from bridge_rules.transform.framing import NOT_JSON, Event, EventTooLarge, Framer

# The SSE format's own definition, applied to the whole input at once: two line ends in a
# row (CRLF, LF, or a CR no LF follows) end an event.
BOUNDARY = re.compile(rb"(?:\r\n|\n|\r(?!\n))(?:\r\n|\n|\r(?!\n))")


def reference(data: bytes) -> tuple[list[bytes], bytes]:
    events, begin = [], 0
    for m in BOUNDARY.finditer(data):
        events.append(data[begin : m.end()])
        begin = m.end()
    return events, data[begin:]


def framed_events(chunks: list[bytes], framer: Framer | None = None) -> tuple[list[bytes], bytes]:
    framer = framer or Framer()
    runs = [framer.feed(c) for c in chunks]
    last, tail = framer.close()
    runs.append(last)
    events = [e.raw for r in runs if r is not None for e in r.events()]
    assert b"".join(r for r in runs if r is not None) == b"".join(events)
    return events, tail


line = st.sampled_from([b"event: x", b"data: {}", b": note", b"", b"data", b"id: 1"])
eol = st.sampled_from([b"\n", b"\r\n", b"\r"])


@given(st.lists(st.tuples(line, eol), max_size=24), st.lists(st.integers(0, 200), max_size=8))
def test_any_chunking_cuts_the_events_the_format_defines(
    lines: list[tuple[bytes, bytes]], cuts: list[int]
) -> None:
    data = b"".join(text + end for text, end in lines)
    points = [0, *sorted(c for c in cuts if c < len(data)), len(data)]
    chunks = [data[a:b] for a, b in itertools.pairwise(points)]
    events, tail = framed_events(chunks)
    want, want_tail = reference(data)
    if want_tail == b"" or not want_tail.endswith(b"\r"):
        assert (events, tail) == (want, want_tail)
    else:  # the stream ended on a CR: the last event is whole only at close()
        assert b"".join(events) + tail == data


def test_a_run_of_line_feeds_is_cut_in_pairs_from_its_first() -> None:
    data = b"a\n\n\nb\n\n\n\n\nc\n\n\n"
    for size in range(1, len(data) + 1):
        chunks = [data[i : i + size] for i in range(0, len(data), size)]
        assert framed_events(chunks) == (
            [b"a\n\n", b"\nb\n\n", b"\n\n", b"\nc\n\n"],
            b"\n",
        ), size


def test_line_feed_runs_around_a_tool_start_keep_every_byte(eng: Engine) -> None:
    stream = b"\n" + text_delta(0, "a") + b"\n" + start(1, "mcp__pi__ls") + b"\n\n\n" + stop(1)
    want = stream.replace(b'"name":"mcp__pi__ls"', b'"name":"ls"')
    for size in (None, 1, 2, 3, 5, 64):
        assert run(eng, stream, size) == want, size


def test_an_event_parses_its_fields_once_and_keeps_them() -> None:
    event = Event(b'event: ping\ndata: {"type":"ping"}\n\n')
    assert (event.name, event.kind, event.json()) == ("ping", "ping", {"type": "ping"})
    assert event.json() is event.json()
    assert Event(b"data: {not json\n\n").json() is NOT_JSON
    assert Event(b": comment only\n\n").kind is None
    unnamed = Event(b'data: {"type":"message_stop"}\r\n\r\n')
    assert (unnamed.name, unnamed.kind, unnamed.eol) == (None, "message_stop", b"\r\n")


def test_a_rebuilt_event_keeps_its_lines_and_carries_its_data() -> None:
    event = Event(b'event: x\r\n: note\r\ndata: {"a":1}\r\n\r\n')
    rebuilt = event.with_data({"a": 2})
    assert rebuilt.raw == b'event: x\r\n: note\r\ndata: {"a":2}\r\n\r\n'
    assert rebuilt.json() == {"a": 2}


# ------------------------------------------------------------------ the cap
def test_an_event_past_the_cap_raises_before_it_is_buffered_whole() -> None:
    framer = Framer(cap=100)
    assert framer.feed(b"data: " + b"x" * 90 + b"\n\n") is not None  # whole events pass
    framer.feed(b"data: " + b"x" * 64)
    with pytest.raises(EventTooLarge) as info:
        framer.feed(b"x" * 64)  # 134 bytes since the last boundary
    assert info.value.cap == 100
    assert framer.pending == 134


def test_a_skimming_framer_keeps_an_oversized_events_name_in_bounded_memory() -> None:
    framer = Framer(cap=1000, skim=True)
    framer.feed(b"event: content_block_delta\ndata: {")
    for _ in range(1000):
        framer.feed(b"x" * 1000)
        assert framer.pending <= 2000
    run_ = framer.feed(b'}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n')
    assert run_ is not None
    assert [e.kind for e in run_.events()] == ["content_block_delta", "message_stop"]


# --------------------------------------------------------- linear work, bounded memory
BIG = 16 << 20


def one_big_event(size: int) -> list[bytes]:
    body = (
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"text_delta","text":"' + b"x" * size + b'"}}'
    )
    return [body[i : i + 1024] for i in range(0, len(body), 1024)] + [b"\n\n"]


def test_one_16_mb_event_in_1_kib_chunks_is_looked_at_a_bounded_number_of_times(
    eng: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    looked: list[int] = []
    last_end = framing._last_end

    def counting(buf: Any, begin: int, cr: bool) -> int:
        looked.append(len(buf) - begin)
        return last_end(buf, begin, cr)

    monkeypatch.setattr(framing, "_last_end", counting)
    chunks = one_big_event(BIG)
    out = b"".join(eng.inbound_stream(chunks, REGISTERED))
    assert out == b"".join(chunks)
    # Every feed looks at its own bytes and at most three before them (today's quadratic
    # rescans looked at 16 MB x 16,384 feeds / 2, about 137 GB).
    assert sum(looked) <= sum(len(c) for c in chunks) + 3 * len(chunks)


def test_one_16_mb_event_takes_memory_linear_in_its_size(eng: Engine) -> None:
    chunks = one_big_event(BIG)
    tracemalloc.start()
    try:
        out = b"".join(eng.inbound_stream(chunks, REGISTERED))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(out) > BIG
    assert peak < 3 * BIG  # the growing buffer, and the event once: no copy per feed
