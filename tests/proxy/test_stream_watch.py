"""StreamWatch reads only the events that can end a stream, and judges a run as reading
every event of it did before: checked against that reading on generated runs (names,
unnamed events, escaped types, comments, runs of blank lines, CR line ends)."""

from __future__ import annotations

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.budget import examples

from bridge_rules.proxy.stream import StreamWatch
from bridge_rules.transform.framing import Event, framed, split

KINDS = ["message_stop", "error", "ping", "content_block_delta", "message_delta", "other"]


def _escaped(text: str) -> str:
    """``text`` with its first letter written as a JSON ``\\u`` escape."""
    return f"\\u{ord(text[0]):04x}{text[1:]}"


@st.composite
def events(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(KINDS))
    spelled = _escaped(kind) if draw(st.booleans()) else kind
    prose = draw(st.sampled_from(["", "the message_stop", "an error", 'a "quoted" error', "x"]))
    data = b'{"type":"%s","text":%s}' % (spelled.encode(), orjson.dumps(prose))
    lines = []
    if draw(st.booleans()):
        lines.append(b"event: " + draw(st.sampled_from(KINDS)).encode())
    if draw(st.booleans()):
        lines.append(b": a comment naming error")
    lines.append(b"data: " + data)
    blank = draw(st.sampled_from([b"\n\n", b"\n\n\n\n"]))
    return b"\n".join(lines) + blank


def oracle(run: bytes, cr: bool) -> tuple[bool, bool]:
    """What the watch said before it cut out only some events: every event of a run that
    holds either word read (a run holding neither was never read)."""
    if b"message_stop" not in run and b"error" not in run:
        return False, False
    kinds = [Event(raw).kind for raw in split(run, cr)]
    return "message_stop" in kinds, "error" in kinds


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(events(), min_size=1, max_size=8), st.booleans())
def test_the_watch_sees_what_reading_every_event_sees(parts: list[bytes], crlf: bool) -> None:
    data = b"".join(parts)
    if crlf:
        data = data.replace(b"\n", b"\r\n")
    run = framed(data, crlf)
    watch = StreamWatch()
    watch.saw(run)
    assert (watch.stopped, watch.upstream_error) == oracle(data, crlf)
    assert run.whole or crlf  # not split: the rewriter after it still cuts out what it needs


def test_a_stop_after_blank_lines_is_read_where_split_cuts_it() -> None:
    run = framed(b'data: {"type":"ping"}\n\n\n\nevent: message_stop\ndata: {}\n\n', False)
    watch = StreamWatch()
    watch.saw(run)
    assert watch.stopped
    assert not watch.upstream_error
