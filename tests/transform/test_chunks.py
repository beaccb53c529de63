"""The one driver loop: sync and async bodies give the same bytes, for every cut.

Oracles that do not share the drivers' code: the whole stream fed in one piece, and, for the
``models:`` marks, :func:`mark_message` over the same answer as one JSON message (a dict walk,
not a line scanner).
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator, Iterable
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from bridge_rules.transform.chunks import drive, drive_async
from bridge_rules.transform.model_marks import mark_message, mark_stream, mark_stream_async


def cut(data: bytes, at: Iterable[int]) -> list[bytes]:
    points = sorted({0, len(data), *(a % (len(data) + 1) for a in at)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


def pull_async(make: Any, chunks: list[bytes]) -> list[bytes]:
    async def body() -> AsyncIterator[bytes]:
        for c in chunks:
            yield c

    async def run() -> list[bytes]:
        return [piece async for piece in make(body())]

    return asyncio.run(run())


class Upper:
    """A push core whose output is easy to know: letters upper-cased, held to each line end."""

    made = 0

    def __init__(self) -> None:
        Upper.made += 1
        self.rest = b""
        self.closed = 0

    def feed(self, chunk: bytes) -> bytes:
        data = self.rest + chunk
        cut_at = data.rfind(b"\n") + 1
        self.rest = data[cut_at:]
        return data[:cut_at].upper()

    def close(self) -> bytes:
        self.closed += 1
        return self.rest.upper()


@given(st.binary(max_size=200), st.lists(st.integers(min_value=0), max_size=12))
def test_sync_and_async_give_the_same_pieces(data: bytes, at: list[int]) -> None:
    chunks = cut(data, at)
    sync = list(drive(Upper, chunks))
    assert sync == pull_async(lambda body: drive_async(Upper, body), chunks)
    assert b"".join(sync) == data.upper()
    assert b"" not in sync  # an empty output is not a piece


def test_the_core_is_made_on_the_first_pull_and_closed_once() -> None:
    made: list[Upper] = []

    def start() -> Upper:
        made.append(Upper())
        return made[-1]

    stream = drive(start, [b"a\n", b"b"])
    assert made == []  # as a generator's body: nothing runs before the stream is read
    assert list(stream) == [b"A\n", b"B"]
    assert [u.closed for u in made] == [1]


def sse(events: list[dict[str, Any]]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def answer(model: str, signatures: list[str]) -> tuple[dict[str, Any], bytes]:
    blocks = [{"type": "thinking", "thinking": "hm", "signature": s} for s in signatures]
    message = {"type": "message", "model": model, "role": "assistant", "content": blocks}
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {**message, "content": []}}
    ]
    for i, s in enumerate(signatures):
        events += [
            {
                "type": "content_block_start",
                "index": i,
                "content_block": {**blocks[i], "signature": ""},
            },
            {
                "type": "content_block_delta",
                "index": i,
                "delta": {"type": "signature_delta", "signature": s},
            },
            {"type": "content_block_stop", "index": i},
        ]
    events.append({"type": "message_stop"})
    return message, sse(events)


SIG = st.text(alphabet="abcXYZ019+/=", min_size=1, max_size=12)


@given(
    st.sampled_from(["claude-a", "claude-b-1"]),
    st.lists(SIG, min_size=1, max_size=3),
    st.lists(st.integers(min_value=0), max_size=10),
)
def test_marks_stream_as_the_message_is_marked(
    model: str, signatures: list[str], at: list[int]
) -> None:
    message, data = answer(model, signatures)
    chunks = cut(data, at)
    sync = b"".join(mark_stream(chunks, "asked-model"))
    assert sync == b"".join(pull_async(lambda b: mark_stream_async(b, "asked-model"), chunks))
    streamed = [
        json.loads(line[5:])["delta"]["signature"]
        for line in sync.splitlines()
        if b"signature_delta" in line
    ]
    marked = mark_message(message, "asked-model")["content"]
    assert streamed == [b["signature"] for b in marked]
    assert all(s != b["signature"] for s, b in zip(signatures, marked, strict=True))
