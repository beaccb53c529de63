"""The one driver loop: sync and async bodies give the same bytes, for every cut.

Oracles that do not share the drivers' code: the whole stream fed in one piece, and, for the
``models:`` marks, :func:`mark_message` over the same answer as one JSON message (a dict walk,
not a line scanner), the stream written every way the SSE format and JSON allow (line ends,
the space after a colon, data over several lines, ``\\u`` escapes) by a writer here and read
back by the format's rules written out here.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.transform.spellings import COMMON, Spelling, data_of, spellings

import bridge_rules
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


def sse(events: list[dict[str, Any]], how: Spelling = COMMON) -> bytes:
    return b"".join(how.event(e["type"], e) for e in events)


def answer(
    model: str, signatures: list[str], how: Spelling = COMMON
) -> tuple[dict[str, Any], bytes]:
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
    return message, sse(events, how)


SIG = st.text(alphabet="abcXYZ019+/=", min_size=1, max_size=12)


@given(
    st.sampled_from(["claude-a", "claude-b-1"]),
    st.lists(SIG, min_size=1, max_size=3),
    st.lists(st.integers(min_value=0), max_size=10),
    spellings("signaturemodelsth_"),
)
def test_marks_stream_as_the_message_is_marked(
    model: str, signatures: list[str], at: list[int], how: Spelling
) -> None:
    message, data = answer(model, signatures, how)
    chunks = cut(data, at)
    sync = b"".join(mark_stream(chunks, "asked-model"))
    assert sync == b"".join(pull_async(lambda b: mark_stream_async(b, "asked-model"), chunks))
    streamed = [
        e["delta"]["signature"]
        for e in data_of(sync)
        if e["type"] == "content_block_delta" and e["delta"]["type"] == "signature_delta"
    ]
    marked = mark_message(message, "asked-model")["content"]
    assert streamed == [b["signature"] for b in marked]
    assert all(s != b["signature"] for s, b in zip(signatures, marked, strict=True))
    want = data_of(data)  # every other event as it came
    deltas = iter(b["signature"] for b in marked)
    for e in want:
        if e["type"] == "content_block_delta":
            e["delta"]["signature"] = next(deltas)
    assert data_of(sync) == want


@pytest.mark.parametrize(
    "how",
    [
        Spelling(eol=b"\r"),
        Spelling(escaped=frozenset("s")),  # "\u0073ignature", "\u0073ignature_delta"
        Spelling(escaped=frozenset("m")),  # "\u006dessage_start": the answer's model
        Spelling(lines=2),
    ],
    ids=["lone-cr", "escaped-signature", "escaped-message-start", "data-over-two-lines"],
)
def test_a_signature_is_marked_however_the_sse_and_json_spell_it(how: Spelling) -> None:
    _message, data = answer("claude-a", ["abc"], how)
    out = list(mark_stream([data[i : i + 7] for i in range(0, len(data), 7)], "asked-model"))
    deltas = [e["delta"] for e in data_of(b"".join(out)) if e["type"] == "content_block_delta"]
    assert deltas == [{"type": "signature_delta", "signature": "brm1~claude-a~abc"}]
    if how.eol == b"\r":  # streamed as it comes, not held to the answer's end
        assert len(out) > 1


@pytest.mark.parametrize(
    "how", [Spelling(eol=b"\r", space=b""), Spelling(escaped=frozenset("s"), lines=3)]
)
def test_a_block_from_such_a_stream_is_foreign_when_replayed_to_another_model(
    how: Spelling, tmp_path: Path
) -> None:
    """The way a user meets the mark: through ``Engine.turn``, the proxy's path, an answer
    from one model replayed to another; ``unknown: keep`` would have sent it on (a 400)."""
    rules = tmp_path / "rules.yaml"
    rules.write_text(
        "bridge-rules: 1\nextends: default\nmodels:\n  'claude-*':\n"
        "    thinking: {foreign: strip, unknown: keep}\n"
    )
    engine = bridge_rules.load(str(rules))
    ask = {"max_tokens": 9, "messages": [{"role": "user", "content": "go"}]}
    turn = engine.turn(json.dumps({"model": "claude-a", **ask}).encode())
    _message, data = answer("claude-a", ["sig"], how)
    out = b"".join(turn.stream([data[i : i + 5] for i in range(0, len(data), 5)]))
    signature = next(
        e["delta"]["signature"] for e in data_of(out) if e["type"] == "content_block_delta"
    )
    block = {"type": "thinking", "thinking": "hm", "signature": signature}
    history = [*ask["messages"], {"role": "assistant", "content": [block]},
               {"role": "user", "content": "and?"}]  # fmt: skip
    for model, kept in (("claude-a", True), ("claude-b-1", False)):
        sent = json.loads(engine.turn(json.dumps({**ask, "model": model, "messages": history})
                                      .encode()).body)  # fmt: skip
        replayed = [b for b in sent["messages"][1]["content"] if b.get("type") == "thinking"]
        assert replayed == ([{**block, "signature": "sig"}] if kept else []), model
