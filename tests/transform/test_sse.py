"""SSE rewriting: any chunking, any line ending, byte-exact when nothing applies."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.transform.conftest import ROOT, adapting, tool_calls

import bridge_rules
from bridge_rules.engine import Engine
from bridge_rules.transform import framing

REGISTERED = ["read", "bash", "ls"]
EXAMPLE = (ROOT / "examples" / "stream.sse").read_bytes()


def ev(name: str, data: object, eol: bytes = b"\n") -> bytes:
    return b"event: " + name.encode() + eol + b"data: " + orjson.dumps(data) + eol + eol


def start(index: int, name: str) -> bytes:
    block = {"type": "tool_use", "id": f"toolu_{index}", "name": name, "input": {}}
    return ev(
        "content_block_start",
        {"type": "content_block_start", "index": index, "content_block": block},
    )


def delta(index: int, partial: str) -> bytes:
    return ev(
        "content_block_delta",
        {
            "type": "content_block_delta",
            "index": index,
            "delta": {"type": "input_json_delta", "partial_json": partial},
        },
    )


def text_delta(index: int, text: str) -> bytes:
    return ev(
        "content_block_delta",
        {
            "type": "content_block_delta",
            "index": index,
            "delta": {"type": "text_delta", "text": text},
        },
    )


def stop(index: int) -> bytes:
    return ev("content_block_stop", {"type": "content_block_stop", "index": index})


def run(engine: Engine, stream: bytes, chunk: int | None = None) -> bytes:
    chunks = (
        [stream] if chunk is None else [stream[i : i + chunk] for i in range(0, len(stream), chunk)]
    )
    return b"".join(engine.inbound_stream(chunks, REGISTERED))


def test_names_rewritten_and_text_events_byte_identical(eng: Engine) -> None:
    out = run(eng, EXAMPLE)
    assert tool_calls(out) == [("read", {"path": "hello.txt"}), ("ls", {"path": "."})]
    head = EXAMPLE[
        : EXAMPLE.index(
            b'event: content_block_start\ndata: {"type":"content_block_start","index":2'
        )
    ]
    assert out.startswith(head)  # thinking, text, ping and comment events untouched
    assert out.endswith(EXAMPLE[EXAMPLE.index(b"event: message_delta") :])


def test_names_only_rules_change_nothing_but_names(
    eng: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        "bridge_rules.transform.sse.adapts_arguments",
        lambda _rt, name, registered=None, shapes=None: False,
    )
    expected = EXAMPLE.replace(b'"name":"Read_ide"', b'"name":"read"').replace(
        b'"name":"mcp__pi__ls"', b'"name":"ls"'
    )
    assert run(eng, EXAMPLE) == expected


def test_stream_with_nothing_to_do_is_byte_identical(eng: Engine) -> None:
    stream = EXAMPLE.replace(b"Read_ide", b"mcp__exa__web_search").replace(
        b"mcp__pi__ls", b"Unknown"
    )
    stream = stream.replace(b"\n", b"\r\n")
    assert run(eng, stream) == stream
    assert run(eng, stream, 1) == stream


def test_every_byte_boundary_gives_the_same_output(eng: Engine) -> None:
    whole = run(eng, EXAMPLE)
    for cut in range(1, len(EXAMPLE)):
        parts = [EXAMPLE[:cut], EXAMPLE[cut:]]
        assert b"".join(eng.inbound_stream(parts, REGISTERED)) == whole, cut
    assert run(eng, EXAMPLE, 1) == whole
    assert run(eng, EXAMPLE, 7) == whole


@pytest.mark.parametrize("eol", [b"\r\n", b"\r", b"\n"])
def test_line_endings_are_kept(eng: Engine, eol: bytes) -> None:
    stream = EXAMPLE.replace(b"\n", eol)
    out = run(eng, stream, 3)
    assert out == run(eng, EXAMPLE).replace(b"\n", eol)


def test_line_endings_that_change_mid_stream_at_every_boundary(eng: Engine) -> None:
    """LF-only framing is found without the CR-aware regex; a stream whose first half is LF
    and second half CRLF or CR, cut anywhere, still comes out as each half would alone."""
    half = EXAMPLE.index(b"event: content_block_start")
    for eol in (b"\r\n", b"\r"):
        stream = EXAMPLE[:half] + EXAMPLE[half:].replace(b"\n", eol)
        expected = run(eng, EXAMPLE)
        expected = expected[:half] + expected[half:].replace(b"\n", eol)
        assert run(eng, stream) == expected
        for cut in range(1, len(stream)):
            parts = [stream[:cut], stream[cut:]]
            assert b"".join(eng.inbound_stream(parts, REGISTERED)) == expected, (eol, cut)


def test_data_only_stream_without_event_lines(eng: Engine) -> None:
    stream = b"".join(
        line + b"\n" for line in EXAMPLE.split(b"\n") if not line.startswith(b"event:")
    )
    out = run(eng, stream, 5)
    assert b'"name":"read"' in out
    assert b"Read_ide" not in out


def test_error_after_200_and_comments_pass_through(eng: Engine) -> None:
    err = ev(
        "error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    )
    stream = b": keepalive\n\n" + start(0, "Read") + err
    out = run(eng, stream, 2)
    assert out.endswith(err)
    assert out.startswith(b": keepalive\n\n")


def test_invalid_event_json_passes_through(eng: Engine) -> None:
    bad = b"event: content_block_start\ndata: {not json\n\n"
    assert run(eng, bad + start(1, "Read")) == bad + start(1, "read")


def test_held_arguments_come_out_as_one_adapted_delta() -> None:
    engine = adapting(bridge_rules.load(), "Read", ("file_path", "path"))
    ping = ev("ping", {"type": "ping"})
    stream = (
        start(0, "Read")
        + delta(0, "")
        + delta(0, '{"file_')
        + ping
        + delta(0, 'path": "a.txt", "limit": 3}')
        + stop(0)
        + text_delta(1, "after")
    )
    out = run(engine, stream, 4)
    assert out == (
        start(0, "read")
        + ping
        + delta(0, '{"path":"a.txt","limit":3}')
        + stop(0)
        + text_delta(1, "after")
    )


def test_text_is_not_held_while_arguments_are() -> None:
    engine = adapting(bridge_rules.load(), "Read", ("file_path", "path"))
    rw_chunks = [start(0, "Read"), delta(0, '{"file_path"'), text_delta(1, "live")]
    outputs = list(engine.inbound_stream(iter(rw_chunks), REGISTERED))
    assert outputs[0] == start(0, "read")
    assert outputs[1] == text_delta(1, "live")  # emitted while block 0 is still held


def test_unparsable_held_input_is_released_untouched() -> None:
    engine = adapting(bridge_rules.load(), "Read", ("file_path", "path"))
    stream = start(0, "Read") + delta(0, '{"file_path": "a') + stop(0)
    assert run(engine, stream) == start(0, "read") + delta(0, '{"file_path": "a') + stop(0)


def test_error_releases_held_deltas_first() -> None:
    engine = adapting(bridge_rules.load(), "Read", ("file_path", "path"))
    err = ev("error", {"type": "error", "error": {"type": "overloaded_error"}})
    stream = start(0, "Read") + delta(0, '{"file_path": "a"') + err
    assert run(engine, stream, 9) == start(0, "read") + delta(0, '{"file_path": "a"') + err


def test_truncated_stream_flushes_what_it_holds() -> None:
    engine = adapting(bridge_rules.load(), "Read", ("file_path", "path"))
    stream = start(0, "Read") + delta(0, '{"file_path": "a"}') + b"event: content_block_st"
    assert (
        run(engine, stream, 6)
        == start(0, "read") + delta(0, '{"file_path": "a"}') + b"event: content_block_st"
    )


def test_utf8_split_inside_a_character(eng: Engine) -> None:
    text = text_delta(0, "über — 日本語 🎉")
    assert run(eng, text, 1) == text


def test_async_variant_matches(eng: Engine) -> None:
    async def source() -> AsyncIterator[bytes]:
        for i in range(0, len(EXAMPLE), 11):
            yield EXAMPLE[i : i + 11]

    async def collect() -> bytes:
        return b"".join([piece async for piece in eng.inbound_stream_async(source(), REGISTERED)])

    assert asyncio.run(collect()) == run(eng, EXAMPLE)


def test_example_file_exists_for_the_cli() -> None:
    assert Path(ROOT / "examples" / "stream.sse").stat().st_size > 0


line_text = st.text(
    alphabet=st.characters(codec="utf-8", exclude_characters="\r\n"), max_size=12
).map(str.encode)
sse_line = st.one_of(
    line_text.map(lambda t: b"event: " + t),
    line_text.map(lambda t: b"event:" + t),
    line_text.map(lambda t: b"data: " + t),
    line_text.map(lambda t: b"data:" + t),
    line_text.map(lambda t: b":" + t),  # a comment
    line_text,
    st.just(b""),
)


@given(st.lists(sse_line, max_size=4), st.sampled_from([b"\n", b"\r\n", b"\r"]))
def test_the_common_shape_is_read_as_the_general_parser_reads_it(
    lines: list[bytes], eol: bytes
) -> None:
    # Every event here, and the shape Anthropic sends (event line, data line, LF), which
    # the generated lists often take.
    for raw in (eol.join(lines) + eol + eol, b"event: x\ndata: " + b"".join(lines) + b"\n\n"):
        fields, event = framing.parse_lines(raw), framing.Event(raw)
        assert event.name == fields.name
        assert event.data == (fields.data if fields.data_at >= 0 else None)
