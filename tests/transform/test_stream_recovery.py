"""`<tool_call>` recovery in SSE streams: the blocks the message rewriter makes, any chunking."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.budget import examples
from tests.transform.conftest import write_rules
from tests.transform.spellings import Spelling

from bridge_rules.engine import Engine
from bridge_rules.transform.scope import CallScope
from bridge_rules.transform.sse import StreamRewriter
from bridge_rules.transform.stream import open_rewriter

REGISTERED = ["read", "bash", "ls"]
RECOVER = "text:\n  recover_tool_calls: true\n"


@pytest.fixture(scope="module")
def rules(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    return write_rules(tmp_path_factory.mktemp("rules"), RECOVER)


def ev(
    name: str,
    data: object,
    eol: bytes = b"\n",
    named: bool = True,
    *,
    separators: tuple[str, str] | None = None,
    how: Spelling | None = None,
) -> bytes:
    """One event; its JSON compact, or laid out with ``separators`` as ``json.dumps`` does,
    or written as ``how`` says."""
    if how is not None:
        return how.event(name, data)
    head = b"event: " + name.encode() + eol if named else b""
    if separators is None:
        body = orjson.dumps(data)
    else:
        body = json.dumps(data, separators=separators, ensure_ascii=False).encode()
    return head + b"data: " + body + eol + eol


# Characters a text delta in CASES. 13 is prime, so tags straddle delta boundaries at
# varying offsets, and the streams stay short enough to split at every byte (the cost of
# that test grows with the square of a stream's length). Other delta sizes, 1 to 1000 and
# random ones, are in test_any_delta_sizes_give_the_same_message and the properties below.
STEP = 13


def sse(blocks: list[Any], stop: str = "end_turn", step: int = STEP, **kw: Any) -> bytes:
    """An upstream stream: text blocks (str) streamed ``step`` characters a delta, tool blocks."""
    out = ev("message_start", {"type": "message_start", "message": _head()}, **kw)
    for index, block in enumerate(blocks):
        if isinstance(block, str):
            start = {"type": "text", "text": ""}
            out += ev("content_block_start", _start(index, start), **kw)
            for i in range(0, len(block), step):
                delta = {"type": "text_delta", "text": block[i : i + step]}
                out += ev("content_block_delta", _delta(index, delta), **kw)
        else:
            name, args = block
            start = {"type": "tool_use", "id": f"toolu_{index}", "name": name, "input": {}}
            out += ev("content_block_start", _start(index, start), **kw)
            delta = {"type": "input_json_delta", "partial_json": orjson.dumps(args).decode()}
            out += ev("content_block_delta", _delta(index, delta), **kw)
        out += ev("content_block_stop", {"type": "content_block_stop", "index": index}, **kw)
    out += ev("ping", {"type": "ping"}, **kw)
    message_delta = {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {}}
    out += ev("message_delta", message_delta, **kw)
    return out + ev("message_stop", {"type": "message_stop"}, **kw)


def _head() -> dict[str, Any]:
    return {"id": "msg_rec", "type": "message", "role": "assistant", "content": []}


def _start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def _delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def assemble(stream: bytes) -> dict[str, Any]:
    """The message a client builds from a stream; checks indices are 0, 1, 2, ... in order."""
    message: dict[str, Any] = {}
    blocks: list[dict[str, Any]] = []
    partial: dict[int, str] = {}
    for line in stream.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n"):
        if not line.startswith(b"data:"):
            continue
        data = orjson.loads(line[5:])
        kind = data["type"]
        if kind == "message_start":
            message = dict(data["message"])
        elif kind == "content_block_start":
            assert data["index"] == len(blocks), "blocks are numbered in order"
            blocks.append(dict(data["content_block"]))
        elif kind == "content_block_delta":
            assert data["index"] == len(blocks) - 1, "deltas belong to the open block"
            delta = data["delta"]
            if delta["type"] == "text_delta":
                blocks[-1]["text"] += delta["text"]
            else:
                partial[data["index"]] = partial.get(data["index"], "") + delta["partial_json"]
        elif kind == "message_delta":
            message["stop_reason"] = data["delta"]["stop_reason"]
    for index, text in partial.items():
        blocks[index]["input"] = orjson.loads(text)
    message["content"] = blocks
    return message


def run(engine: Engine, stream: bytes, chunks: list[int] | None = None) -> bytes:
    cuts = [0, *(chunks or []), len(stream)]
    pieces = [stream[a:b] for a, b in itertools.pairwise(cuts)]
    return b"".join(engine.inbound_stream(pieces, REGISTERED))


CALLS = (
    'Reading.\n<tool_call>{"name": "mcp__pi__ls", "arguments": {"path": "."}}</tool_call>\n'
    '<tool_call>{"name": "Read", "args": "{\\"path\\": \\"a\\"}"}</tool_call> then ü <b>done</b>'
)
OPEN = "<tool_call>"
BASH = '{"name": "bash", "command": "ls"}'
READ = '{"name": "read", "arguments": {"path": "p"}}'
CASES = {
    "two calls in prose": sse([CALLS]),
    "a real call after": sse([CALLS, ("mcp__pi__ls", {"path": "x"})], stop="tool_use"),
    "unclosed at max_tokens": sse([f"Ok {OPEN}{BASH}"], "max_tokens"),
    "close tag cut": sse([f"{OPEN}{BASH}\n</tool_"], "max_tokens"),
    "stop sequence": sse([f"{OPEN}\n{READ}\n"], "stop_sequence"),
    "unknown tool": sse(['say <tool_call>{"name": "rm_rf", "arguments": {}}</tool_call> ok']),
    "bad json then good": sse(['<tool_call>{x}</tool_call> <tool_call>{"name":"ls"}</tool_call>']),
    "prose only": sse(["just <tool text, no calls <tool_cal"]),
    "empty text block": sse(["", ("Bash", {"command": "ls"})], stop="tool_use"),
    "CRLF, no event lines": sse([CALLS], eol=b"\r\n", named=False),
}


@pytest.mark.parametrize("name", list(CASES))
def test_stream_matches_message_at_every_split(rules: Engine, name: str) -> None:
    stream = CASES[name]
    expected = rules.inbound(assemble(stream), REGISTERED)
    whole = run(rules, stream)
    assert assemble(whole) == expected
    for cut in range(1, len(stream)):
        assert run(rules, stream, [cut]) == whole, f"split at byte {cut}"
    assert run(rules, stream, list(range(1, len(stream)))) == whole  # one byte a chunk


@pytest.mark.parametrize("step", [1, 2, 3, 11, 1000])
def test_any_delta_sizes_give_the_same_message(rules: Engine, step: int) -> None:
    for text in (CALLS, 'a\n\n<tool_call>{"name": "ls", "arguments": {}}'):
        stream = sse([text], step=step)
        assert assemble(run(rules, stream)) == rules.inbound(assemble(stream), REGISTERED)


def test_recovered_call_is_a_tool_use_block(rules: Engine) -> None:
    out = assemble(run(rules, CASES["unclosed at max_tokens"]))
    assert out["stop_reason"] == "tool_use"
    assert [b["type"] for b in out["content"]] == ["text", "tool_use"]
    call = out["content"][1]
    assert (call["name"], call["input"]) == ("bash", {"command": "ls"})
    assert call["id"].startswith("toolu_br")


def test_later_blocks_are_renumbered(rules: Engine) -> None:
    out = assemble(run(rules, CASES["a real call after"]))
    assert [(b["type"], b.get("name")) for b in out["content"]] == [
        ("text", None),
        ("tool_use", "ls"),
        ("tool_use", "read"),
        ("text", None),
        ("tool_use", "ls"),
    ]


@pytest.mark.parametrize("name", ["unknown tool", "prose only", "empty text block"])
def test_nothing_recovered_means_the_same_bytes(rules: Engine, name: str) -> None:
    stream = CASES[name]
    plain = b"".join(
        StreamRewriter(CallScope.of(rules.runtime, REGISTERED)).feed(stream) for _ in [0]
    )
    assert assemble(run(rules, stream)) == assemble(plain)
    assert assemble(run(rules, stream))["stop_reason"] == "end_turn" or name == "empty text block"


def test_prose_streams_at_once_and_only_a_possible_tag_is_held(rules: Engine) -> None:
    rw = open_rewriter(CallScope.of(rules.runtime, REGISTERED))
    head = ev("message_start", {"type": "message_start", "message": _head()})
    head += ev("content_block_start", _start(0, {"type": "text", "text": ""}))
    assert rw.feed(head)  # the message start goes out; the text block start waits for text

    def text(chunk: str) -> str:
        out = rw.feed(ev("content_block_delta", _delta(0, {"type": "text_delta", "text": chunk})))
        return "".join(
            orjson.loads(line[5:])["delta"]["text"]
            for line in out.split(b"\n")
            if line.startswith(b"data:") and b"text_delta" in line
        )

    assert text("  ") == ""  # whitespace opening a segment waits for text
    assert text("Hello world") == "  Hello world"
    assert text(", I will ") == ", I will "
    assert text("<tool") == ""  # could still be <tool_call>
    assert text("box> and more") == "<toolbox> and more"
    assert text('\n<tool_call>{"name": "ls", "arguments"') == "\n"
    assert text(": {}}</tool_call> \n") == ""
    assert text(" next") == "next"


def test_truncated_stream_releases_what_it_held(rules: Engine) -> None:
    stream = sse(['Ok <tool_call>{"name": "bash"'])
    cut = stream.index(b"event: content_block_stop")
    out = assemble(run(rules, stream[:cut]))
    assert out["content"] == [{"type": "text", "text": 'Ok <tool_call>{"name": "bash"'}]


def test_async_stream_recovers_too(rules: Engine) -> None:
    import asyncio

    async def chunks() -> Any:
        for i in range(0, len(CASES["two calls in prose"]), 9):
            yield CASES["two calls in prose"][i : i + 9]

    async def collect() -> bytes:
        return b"".join([c async for c in rules.inbound_stream_async(chunks(), REGISTERED)])

    assert asyncio.run(collect()) == run(rules, CASES["two calls in prose"])


def test_off_by_default(eng: Engine, tmp_path: Path) -> None:
    stream = CASES["two calls in prose"]
    assert assemble(b"".join(eng.inbound_stream([stream], REGISTERED)))["stop_reason"] == "end_turn"


def test_a_text_block_without_its_stop_ends_before_the_message(rules: Engine) -> None:
    stream = sse([f"Ok {OPEN}{BASH}"], "max_tokens")
    cut = stream.index(b"event: content_block_stop")
    resumed = stream.index(b"event: ping")
    out = assemble(run(rules, stream[:cut] + stream[resumed:]))
    assert [b["type"] for b in out["content"]] == ["text", "tool_use"]
    assert out["stop_reason"] == "tool_use"


PARTS = [
    "<tool_call>",
    "</tool_call>",
    "<tool_",
    "</tool_",
    '{"name": "ls", "arguments": {"path": "."}}',
    '{"name": "rm", "arguments": {}}',
    '{"name": "bash"',
    " ",
    "\n",
    "text",
    "ü",
    "<",
    ">",
]


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    parts=st.lists(st.sampled_from(PARTS), max_size=12),
    step=st.integers(1, 9),
    cut=st.integers(1, 64),
    stop=st.sampled_from(["end_turn", "max_tokens", "tool_use"]),
)
def test_any_text_any_chunking_matches_the_message(
    rules: Engine, parts: list[str], step: int, cut: int, stop: str
) -> None:
    stream = sse(["".join(parts)], stop, step=step)
    expected = rules.inbound(assemble(stream), REGISTERED)
    chunks = list(range(cut, len(stream), cut))
    assert assemble(run(rules, stream, chunks)) == expected


BLOCKS = st.one_of(
    st.lists(st.sampled_from(PARTS), max_size=6).map("".join),
    st.sampled_from([("mcp__pi__ls", {"path": "x"}), ("Nope", {"a": 1}), ("Bash", {})]),
)


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    blocks=st.lists(BLOCKS, max_size=4),
    cut=st.integers(1, 80),
    stop=st.sampled_from(["end_turn", "tool_use"]),
)
def test_refused_and_recovered_calls_stream_like_the_message(
    strict: Engine, blocks: list[Any], cut: int, stop: str
) -> None:
    stream = sse(blocks, stop, step=4)
    expected = strict.inbound(assemble(stream), REGISTERED)
    assert assemble(run(strict, stream, list(range(cut, len(stream), cut)))) == expected


# JSON layouts of the events: compact (the Anthropic API), json.dumps' default (gateways
# that re-serialise in Python), and the tabs and spaces JSON also allows between tokens.
LAYOUTS = [(",", ":"), (", ", ": "), (",\t", ":\t"), (" , ", " :  ")]


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    blocks=st.lists(BLOCKS, max_size=4),
    layout=st.sampled_from(LAYOUTS),
    cut=st.integers(1, 80),
)
def test_a_stream_in_any_json_layout_streams_like_the_message(
    rules: Engine, blocks: list[Any], layout: tuple[str, str], cut: int
) -> None:
    """The byte-shape reads of both passes (tool and text starts) take any layout; the
    oracle is the JSON message path on the same answer, and the compact stream's result."""
    stream = sse(blocks, "end_turn", step=4, separators=layout)
    expected = rules.inbound(assemble(stream), REGISTERED)
    got = assemble(run(rules, stream, list(range(cut, len(stream), cut))))
    assert got == expected
    assert got == assemble(run(rules, sse(blocks, "end_turn", step=4)))


# Escapes a JSON writer may use in a stream's text and keys: Go's encoding/json writes
# < > & as \u003c \u003e \u0026, ensure_ascii writers every non-ASCII character.
ESCAPES = st.builds(
    Spelling,
    st.sampled_from([b"\n", b"\r\n", b"\r"]),
    st.sampled_from([b" ", b""]),
    st.frozensets(st.sampled_from("<<<>&ü_tol"), min_size=1, max_size=3),
    st.booleans(),
    st.just(1),  # one data line an event: ``assemble`` reads a line at a time
    st.booleans(),
)


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(blocks=st.lists(BLOCKS, max_size=4), how=ESCAPES, cut=st.integers(1, 80))
def test_a_stream_written_with_escapes_streams_like_the_message(
    rules: Engine, blocks: list[Any], how: Spelling, cut: int
) -> None:
    """Both passes look for ``<`` and for keys in an event's bytes before parsing it; an
    escaped ``<`` (``\\u003c``) or key must still be read. Oracle: the JSON message path
    on the same answer, and the stream as Anthropic writes it."""
    stream = sse(blocks, "end_turn", step=4, how=how)
    expected = rules.inbound(assemble(stream), REGISTERED)
    got = assemble(run(rules, stream, list(range(cut, len(stream), cut))))
    assert got == expected
    assert got == assemble(run(rules, sse(blocks, "end_turn", step=4)))


def rewritten(stream: bytes, how: Spelling) -> bytes:
    """A stream of :data:`CASES` (LF line ends, one data line an event) written as ``how``."""
    events = [e.split(b"\n") for e in stream.split(b"\n\n")[:-1]]
    return b"".join(how.event(e[0][7:].decode(), json.loads(e[1][6:])) for e in events)


@pytest.mark.parametrize("name", [n for n in CASES if not n.startswith("CRLF")])
@pytest.mark.parametrize("upper", [False, True])
def test_a_case_written_as_go_writes_json_streams_like_the_message(
    rules: Engine, name: str, upper: bool
) -> None:
    """Go's encoding/json writes < > & as \\u003c \\u003e \\u0026: text the agent reads
    as a ``<tool_call>`` tag is recovered as it is when written plainly."""
    stream = rewritten(CASES[name], Spelling(escaped=frozenset("<>&"), upper=upper))
    expected = rules.inbound(assemble(stream), REGISTERED)
    for cut in (1, 7, 64, len(stream)):
        assert assemble(run(rules, stream, list(range(cut, len(stream), cut)))) == expected, cut


@pytest.fixture(scope="module")
def strict(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    return write_rules(tmp_path_factory.mktemp("strict"), RECOVER + "inbound:\n  unmapped: error\n")


@pytest.mark.parametrize("mode", ["text", "drop", "error"])
@pytest.mark.parametrize(
    "name",
    ["two calls in prose", "a real call after", "unclosed at max_tokens", "stop sequence"],
)
def test_a_recovered_call_to_a_denied_tool_streams_like_the_message(
    tmp_path: Path, mode: str, name: str
) -> None:
    """The policy reaches calls recovered from text in a stream as it does in a message: a
    denied tool's call never goes out as a call, whatever the chunking."""
    policy = f"policy:\n  deny: [bash, ls, read, mcp__pi__ls]\n  on_denied: {mode}\n"
    denying = write_rules(tmp_path, RECOVER + policy)
    stream = CASES[name]
    out = run(denying, stream)
    for denied in (b"bash", b"ls", b"read", b"Read", b"mcp__pi__ls"):
        assert b'"name":"' + denied + b'"' not in out
    if mode == "error":
        assert b'"type":"error"' in out
        assert b"permission_error" in out
        return
    assert assemble(out) == denying.inbound(assemble(stream), REGISTERED)
    for cut in (1, 7, 30):
        assert run(denying, stream, list(range(cut, len(stream), cut))) == out
