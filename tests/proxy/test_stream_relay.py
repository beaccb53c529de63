"""The proxy's one framing of an upstream stream: capped, watched by its events."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import orjson
import pytest

from bridge_rules.proxy.stream import EventTooLarge, StreamWatch, relay


def ev(name: str, data: object) -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"


PROSE = ev(
    "content_block_delta",
    {
        "type": "content_block_delta",
        "index": 0,
        "delta": {
            "type": "text_delta",
            "text": ("the event named message_stop, and an error event"),
        },
    },
)
STOP = ev("message_stop", {"type": "message_stop"})


def relayed(
    chunks: list[bytes], cap: int = 1 << 20, untouched: bool = False
) -> tuple[list[bytes], StreamWatch]:
    watch = StreamWatch()

    async def source() -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield chunk

    async def collect() -> list[bytes]:
        return [c async for c in relay(source(), cap, watch, untouched=untouched)]

    return asyncio.run(collect()), watch


@pytest.mark.parametrize("untouched", [False, True])
def test_text_that_names_the_events_does_not_end_the_stream(untouched: bool) -> None:
    out, watch = relayed([PROSE[:40], PROSE[40:]], untouched=untouched)
    assert b"".join(out) == PROSE
    assert not watch.finished  # a cut here still gets the proxy's error event


@pytest.mark.parametrize("untouched", [False, True])
def test_message_stop_and_an_unnamed_error_event_are_seen(untouched: bool) -> None:
    _, watch = relayed([PROSE, STOP[:9], STOP[9:]], untouched=untouched)
    assert watch.stopped
    assert not watch.upstream_error
    _, watch = relayed([b'data: {"type":"error","error":{}}\n\n'], untouched=untouched)
    assert watch.upstream_error


def test_a_rewriter_gets_complete_events_then_the_tail() -> None:
    out, _ = relayed([PROSE[:40], PROSE[40:] + STOP[:10], STOP[10:] + b"event: x"])
    assert out == [PROSE, STOP, b"event: x"]


def test_an_oversized_event_stops_a_rewritten_stream() -> None:
    with pytest.raises(EventTooLarge):
        relayed([b"data: " + b"x" * 4096] * 4, cap=8192)


def test_an_untouched_stream_passes_on_as_it_came_and_skims_an_oversized_event() -> None:
    chunks = [b"event: content_block_delta\ndata: "] + [b"x" * 4096] * 64 + [b"\n\n", STOP]
    out, watch = relayed(chunks, cap=8192, untouched=True)
    assert out == chunks
    assert watch.stopped
