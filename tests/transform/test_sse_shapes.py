"""Tool-call events read from their bytes give exactly what parsing them gives.

:class:`~bridge_rules.transform.sse.CallPass` reads the events of a tool call in the
shape Anthropic's endpoints write (and a whole call found in one run) from their bytes;
every other shape is parsed. The pass with that reading turned off is the reference:
over generated streams, chunkings, sealers and reports, both give the same bytes, the
same renames and the same calls sealed.
"""

from __future__ import annotations

import itertools
import json
import random
from dataclasses import dataclass, field
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bridge_rules
from bridge_rules import jsonio
from bridge_rules.calls import ToolCall
from bridge_rules.transform.report import InboundReport
from bridge_rules.transform.scope import CallScope
from bridge_rules.transform.sse import StreamRewriter

ENGINE = bridge_rules.load()
REGISTERED = ("read", "bash", "edit", "write", "grep", "find", "ls")
# Mapped back and adapted (Read, Read_ide, Bash), mapped back only (mcp__pi__ls), local
# already, unknown, and names no fast reading takes (not UTF-8, an escape).
NAMES = ["Read", "Read_ide", "Bash", "mcp__pi__ls", "read", "Unknown", "Réad"]


@dataclass
class Sealer:
    """Seals calls to some tools; records every call it is shown."""

    tools: frozenset[str]
    seen: list[tuple[str, str, Any]] = field(default_factory=list)

    def may_seal(self, local_name: str) -> bool:
        return local_name in self.tools

    def seal(self, call_id: str, call: ToolCall) -> str:
        self.seen.append((call_id, call.name, call.arguments))
        return (
            f"{call_id}.s{len(orjson.dumps(call.arguments))}"
            if call.name in self.tools
            else call_id
        )


def _loose(data: Any, rng: random.Random, reorder: float = 0.15) -> str:
    """JSON as any writer may lay it out on one line: spaces and tabs around every token,
    keys in any order now and then, strings with or without ``\\u`` escapes."""

    def ws() -> str:
        return rng.choice(["", "", " ", "  ", "\t", " \t "])

    if isinstance(data, dict):
        items = list(data.items())
        if rng.random() < reorder:
            rng.shuffle(items)
        inner = ",".join(
            f"{ws()}{_loose(k, rng, reorder)}{ws()}:{ws()}{_loose(v, rng, reorder)}{ws()}"
            for k, v in items
        )
        return "{" + (inner or ws()) + "}"
    if isinstance(data, str):
        return json.dumps(data, ensure_ascii=rng.random() < 0.1)
    return json.dumps(data)


def _event(
    name: str, data: Any, style: str, rng: random.Random | None = None, reorder: float = 0.15
) -> bytes:
    if style == "spaced":  # json.dumps' spaces: read as the compact, written back compact
        return b"event: " + name.encode() + b"\ndata: " + json.dumps(data).encode() + b"\n\n"
    if style == "loose":
        assert rng is not None
        text = (
            rng.choice(["", " ", "\t"]) + _loose(data, rng, reorder) + rng.choice(["", " ", "\t "])
        )
        return b"event: " + name.encode() + b"\ndata: " + text.encode() + b"\n\n"
    body = orjson.dumps(data)
    if style == "crlf":
        return b"event: " + name.encode() + b"\r\ndata: " + body + b"\r\n\r\n"
    if style == "data-only":
        return b"data: " + body + b"\n\n"
    return b"event: " + name.encode() + b"\ndata: " + body + b"\n\n"


styles = st.sampled_from(["common"] * 4 + ["spaced", "loose", "loose", "crlf", "data-only"])
call_styles = st.sampled_from(["common", "common", "spaced", "loose"])
indexes = st.sampled_from([0, 1, 2, 10])
# Argument pieces: plain, escaped, non-ASCII, a \u escape, split inside an escape.
pieces = st.sampled_from(
    [
        "",
        '{"path": "src/',
        'a.py"}',
        '{"file_path": "a.txt", "limit": 3}',
        '{"command": "ls\\n\\tx", "path": "ü/日本"}',
        '{"path": "\\u00e9"}',
        "\u2028",
        "}",
        '{"pattern": "a\\\\b',
        '"}',
        "[1]",
    ]
)


@st.composite
def tool_start(draw: st.DrawFn) -> bytes:
    index, name = draw(indexes), draw(st.sampled_from(NAMES))
    ident = draw(st.sampled_from(["toolu_1", "toolu_é", "toolu/2"]))
    block: dict[str, Any] = {"type": "tool_use", "id": ident, "name": name, "input": {}}
    if draw(st.booleans()) and draw(st.booleans()):
        block["input"] = {"file_path": "x"}  # the whole input up front
    raw = _event(
        "content_block_start",
        {"type": "content_block_start", "index": index, "content_block": block},
        draw(styles),
        draw(st.randoms(use_true_random=False)),
    )
    if ident == "toolu/2":
        raw = raw.replace(b"toolu/2", b"toolu\\/2")  # an escape orjson would not write
    return raw


@st.composite
def args_delta(draw: st.DrawFn) -> bytes:
    data = {
        "type": "content_block_delta",
        "index": draw(indexes),
        "delta": {"type": "input_json_delta", "partial_json": draw(pieces)},
    }
    raw = _event("content_block_delta", data, draw(styles), draw(st.randoms(use_true_random=False)))
    return _broken(raw) if draw(st.integers(0, 3)) == 0 else raw


def _broken(raw: bytes) -> bytes:
    return raw.replace(b"src/", b"src\xff/")  # not UTF-8: not JSON


@st.composite
def other(draw: st.DrawFn) -> bytes:
    index = draw(indexes)
    return draw(
        st.sampled_from(
            [
                _event(
                    "content_block_stop", {"type": "content_block_stop", "index": index}, "common"
                ),
                _event(
                    "content_block_stop", {"type": "content_block_stop", "index": index}, "crlf"
                ),
                _event(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "text", "text": ""},
                    },
                    "common",
                ),
                _event(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "text_delta", "text": "tool_use"},
                    },
                    "common",
                ),
                _event("ping", {"type": "ping"}, "common"),
                _event(
                    "message_delta",
                    {"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
                    "common",
                ),
                _event("error", {"type": "error", "error": {"type": "overloaded_error"}}, "common"),
                b": a comment\n\n",
                b"event: content_block_start\ndata: {not json\n\n",
                b"\n",
            ]
        )
    )


def whole_call(
    index: int,
    name: str,
    parts: list[str],
    style: str = "common",
    seed: int = 0,
    *,
    reorder: float = 0.15,
) -> bytes:
    """A tool call, start, argument deltas and stop, all in one style (the common shape
    unless told)."""
    rng = random.Random(seed)
    block = {"type": "tool_use", "id": f"toolu_{index}", "name": name, "input": {}}
    start = {"type": "content_block_start", "index": index, "content_block": block}
    out = _event("content_block_start", start, style, rng, reorder)
    for piece in parts:
        delta = {"type": "input_json_delta", "partial_json": piece}
        data = {"type": "content_block_delta", "index": index, "delta": delta}
        out += _event("content_block_delta", data, style, rng, reorder)
    stop = {"type": "content_block_stop", "index": index}
    return out + _event("content_block_stop", stop, style, rng, reorder)


@st.composite
def call(draw: st.DrawFn) -> bytes:
    """Mostly a whole call in one run, so that reading it whole is exercised: compact,
    with json.dumps' spaces, or laid out loosely."""
    index, name = draw(indexes), draw(st.sampled_from(NAMES[:5]))
    style, seed = draw(call_styles), draw(st.integers(0, 2**16))
    out = whole_call(index, name, draw(st.lists(pieces, max_size=3)), style, seed)
    return _broken(out) if draw(st.integers(0, 5)) == 0 else out


events = st.lists(st.one_of(call(), tool_start(), args_delta(), other()), max_size=12)


def rewrite(
    stream: bytes, cuts: list[int], fast: bool, sealed: frozenset[str] | None
) -> tuple[Any, ...]:
    sealer = Sealer(sealed) if sealed is not None else None
    report = InboundReport()
    rw = StreamRewriter(CallScope.of(ENGINE.runtime, REGISTERED, sealer, report))
    rw.passes[0].fast = fast  # type: ignore[attr-defined]
    bounds = [0, *sorted(c % (len(stream) + 1) for c in cuts), len(stream)]
    out = [rw.feed(stream[a:b]) for a, b in itertools.pairwise(bounds)]
    out.append(rw.close())
    return b"".join(out), report.renamed, report.renamed_calls, sealer.seen if sealer else None


@settings(max_examples=300, deadline=None)
@given(
    events,
    st.lists(st.integers(0, 10_000), max_size=6),
    st.sampled_from([None, frozenset(), frozenset({"read"}), frozenset({"read", "bash"})]),
)
def test_reading_the_common_shape_gives_what_parsing_gives(
    parts: list[bytes], cuts: list[int], sealed: frozenset[str] | None
) -> None:
    stream = b"".join(parts)
    assert rewrite(stream, cuts, True, sealed) == rewrite(stream, cuts, False, sealed)


def test_a_whole_call_in_one_chunk_is_renamed_and_its_input_sent_once() -> None:
    stream = whole_call(3, "Read_ide", ['{"path": "src/', 'a.py"}'])
    fast = rewrite(stream, [], True, None)
    assert fast == rewrite(stream, [], False, None)
    assert b'"name":"read"' in fast[0]
    assert fast[0].count(b"input_json_delta") == 1
    assert b'"partial_json":"{\\"path\\":\\"src/a.py\\"}"' in fast[0]
    assert fast[1] == {"Read_ide": "read"}


def test_every_cut_of_calls_to_each_name_gives_what_parsing_gives() -> None:
    # Each name's call cut in two at every byte: the start read alone, then the deltas
    # and the stop read where they are, or the call read whole.
    text = {"type": "text_delta", "text": "ok"}
    before = _event(
        "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": text}, "common"
    )
    parts = ['{"path": "src/', 'a.py", "command": "ls\\n"}']
    stream = before + b"".join(whole_call(i + 1, name, parts) for i, name in enumerate(NAMES))
    for sealed in (None, frozenset({"read"})):
        for cut in range(len(stream) + 1):
            assert rewrite(stream, [cut], True, sealed) == rewrite(stream, [cut], False, sealed)


@pytest.mark.parametrize("style", ["spaced", "loose"])
@pytest.mark.parametrize("sealed", [None, frozenset({"read"})])
def test_a_spaced_call_is_read_from_its_bytes_and_written_as_parsing_writes_it(
    style: str, sealed: frozenset[str] | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Gateways that re-serialise with json.dumps put a space after ':' and ','; such a
    # call is read without parsing its deltas or its stop (a sealed start is parsed to
    # give it its new id, as in the common shape), whole or cut in two, and comes out as
    # the parsed path writes it: the renamed start and the adapted delta compact.
    parsed: list[bytes] = []
    loads = jsonio.loads_answer

    def counted(data: bytes) -> Any:
        parsed.append(bytes(data))
        return loads(data)

    parts = ['{"file_path": "src/', 'a.py"}']
    for seed in range(20):
        stream = whole_call(2, "Read_ide", parts, style, seed, reorder=0)
        slow = rewrite(stream, [], False, sealed)
        parsed.clear()
        with monkeypatch.context() as patch:
            patch.setattr(jsonio, "loads_answer", counted)
            fast = [rewrite(stream, cuts, True, sealed) for cuts in ([], [len(stream) // 2])]
        assert fast == [slow, slow]
        starts = [p for p in parsed if b"content_block_start" in p]
        assert len(starts) == len(parsed) == (0 if sealed is None else 2)
        assert b'"name":"read"' in slow[0]
        assert slow[0].count(b"input_json_delta") == 1
