"""Stream entry points, and ``<tool_call>`` recovery in SSE streams (``text.recover_tool_calls``).

A second pass over the complete events :class:`~bridge_rules.transform.sse.StreamRewriter`
releases, so the name/argument rewriting stays where it is and this module only
deals with text blocks:

* a text block's deltas go through the shared :class:`~bridge_rules.transform.recover.TextScanner`;
  text is released as soon as it cannot belong to a tag, so plain prose streams
  live and only a partial ``<tool_call>``, an open tag's body and the whitespace
  right before a tag are held;
* a recovered call is emitted as its own ``tool_use`` block (start, one
  ``input_json_delta`` with the whole input, stop); the text around it becomes
  separate text blocks, and every later block is renumbered;
* ``message_delta``'s ``stop_reason`` (``end_turn``, ``stop_sequence`` or
  ``max_tokens``) becomes ``tool_use`` once a call was recovered.

The blocks, ids and stop reason are exactly what the non-streaming rewriter
makes of the assembled message, whatever the chunking. Events nothing touches
(and text blocks without tags, when nothing before them was recovered) keep
their bytes. :func:`rewrite_stream` picks the plain or the recovering rewriter.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from bridge_rules import jsonio
from bridge_rules.runtime import Runtime
from bridge_rules.transform.recover import (
    RECOVERABLE_STOPS,
    Recovered,
    TextScanner,
    call_id,
    merge_text,
)
from bridge_rules.transform.results import CallSealer
from bridge_rules.transform.sse import _BOUNDARY, StreamRewriter, _Event, _parse_event, _rebuild
from bridge_rules.transform.unmapped import InboundReport, Unmapped, UnmappedPolicy

_BLOCK_EVENTS = frozenset({"content_block_start", "content_block_delta", "content_block_stop"})


@dataclass
class _Text:
    """A text block under recovery: its held start event and the open output segment."""

    start: _Event
    data: dict[str, Any]
    scanner: TextScanner
    out: int | None = None  # output index of the text segment being written
    emitted: bool = False  # any text or call came out of this block


def split_complete(data: bytes) -> tuple[list[bytes], bytes]:
    """Complete events and the unterminated tail."""
    events: list[bytes] = []
    start = 0
    for m in _BOUNDARY.finditer(data):
        events.append(data[start : m.end()])
        start = m.end()
    return events, data[start:]


class SecondPass:
    """Complete SSE events in; recovered ``tool_use`` blocks and the unmapped policy applied."""

    def __init__(
        self,
        rt: Runtime,
        registered: tuple[str, ...] | None,
        sealer: CallSealer | None = None,
        report: InboundReport | None = None,
    ) -> None:
        self.rt = rt
        self.registered = registered
        self.sealer = sealer
        self.recover = rt.plan.recover_tool_calls
        self.policy = UnmappedPolicy(rt, registered, report)
        self._errors: dict[int, Unmapped] = {}  # upstream index -> a call turned into text
        self._calls = 0  # tool_use blocks passed on
        self._refused = 0  # tool_use blocks turned into text (``inbound.unmapped: error``)
        self.message_id = ""
        self.recovered = 0
        self._next = 0  # next output block index
        self._index: dict[int, int] = {}  # upstream index -> output index (non-text blocks)
        self._text: dict[int, _Text] = {}
        self._eol = b"\n"
        self._named = True

    def events(self, data: bytes) -> bytes:
        if not data:
            return b""
        events, tail = split_complete(data)
        return b"".join(self._event(raw) for raw in events) + tail

    def close(self) -> bytes:
        """A stream that ended inside a text block: what it held, released as text."""
        out = []
        for up, block in sorted(self._text.items()):
            held = block.scanner.release()
            if held:
                out.append(self._text_event(block, up, held))
        self._text.clear()
        return b"".join(out)

    # ------------------------------------------------------------ events
    def _event(self, raw: bytes) -> bytes:
        if b"message_start" not in raw and b"message_delta" not in raw and b'"index"' not in raw:
            return raw
        if self._plain_text(raw):
            return raw
        event = _parse_event(raw)
        if event.data_at < 0:
            return raw
        try:
            data: Any = jsonio.loads(event.data)
        except jsonio.JSONDecodeError:
            return raw
        if not isinstance(data, dict):
            return raw
        kind = data.get("type")
        self._eol, self._named = event.eol, event.name is not None
        if kind == "message_start":
            message = data.get("message")
            if isinstance(message, dict) and isinstance(message.get("id"), str):
                self.message_id = message["id"]
            return raw
        if kind == "message_delta":
            return self._unstopped() + self._message_delta(event, data)
        if kind == "message_stop":
            return self._unstopped() + raw
        index = data.get("index")
        if not isinstance(index, int):
            return raw
        if kind == "content_block_start":
            return self._start(event, data, index)
        found = self._errors.get(index)
        if found is not None and kind in _BLOCK_EVENTS:
            return self._unmapped(event, data, index, found)
        block = self._text.get(index)
        if block is not None and kind in _BLOCK_EVENTS:
            if kind == "content_block_delta":
                return self._text_delta(event, data, block, index)
            del self._text[index]
            return self._text_stop(event, data, block, index)
        return self._renumbered(event, data, self._index.get(index, index))

    def _plain_text(self, raw: bytes) -> bool:
        """Prose in a text block with nothing held goes out as it came, unparsed.

        Only when the one open text block keeps its index, the delta cannot hold a ``<``
        (also not escaped), and the scanner holds nothing: then the scanner would release
        the delta's text unchanged, so parsing it would change nothing.
        """
        if len(self._text) != 1 or b'"text_delta"' not in raw:
            return False
        if b"<" in raw or b"\\u003" in raw or b"message_" in raw:
            return False
        ((up, block),) = self._text.items()
        if block.out != up or not block.scanner.plain:
            return False
        return b'"index":%d,' % up in raw or b'"index":%d}' % up in raw

    def _renumbered(self, event: _Event, data: dict[str, Any], out: int) -> bytes:
        if data.get("index") == out:
            return event.raw
        return _rebuild(event, {**data, "index": out})

    def _start(self, event: _Event, data: dict[str, Any], index: int) -> bytes:
        block = data.get("content_block")
        if self.recover and isinstance(block, dict) and block.get("type") == "text":
            scanner = TextScanner(self.rt, self.registered)
            text = _Text(event, data, scanner)
            self._text[index] = text
            initial = block.get("text")
            if isinstance(initial, str) and initial:
                return self._emit(text, index, scanner.feed(initial), None)
            return b""
        out = self._next
        self._next += 1
        self._index[index] = out
        if isinstance(block, dict) and block.get("type") == "tool_use":
            name = block.get("name")
            found = self.policy.check(name) if isinstance(name, str) else None
            if found is not None and self.policy.mode == "error":
                self._errors[index] = found
                self._refused += 1
                empty = {"type": "text", "text": ""}
                start = {"type": "content_block_start", "index": out, "content_block": empty}
                return self._frame("content_block_start", start)
            self._calls += 1
        return self._renumbered(event, data, out)

    def _unmapped(self, event: _Event, data: dict[str, Any], index: int, found: Unmapped) -> bytes:
        """A call turned into text: its argument deltas go, its stop brings the explanation."""
        if data.get("type") != "content_block_stop":
            return b""
        del self._errors[index]
        out = self._index.get(index, index)
        delta = {"type": "text_delta", "text": self.policy.text(found)}
        explained = {"type": "content_block_delta", "index": out, "delta": delta}
        return self._frame("content_block_delta", explained) + self._renumbered(event, data, out)

    def _text_delta(self, event: _Event, data: dict[str, Any], block: _Text, index: int) -> bytes:
        delta = data.get("delta")
        if (
            isinstance(delta, dict)
            and delta.get("type") == "text_delta"
            and isinstance(delta.get("text"), str)
        ):
            pieces = block.scanner.feed(delta["text"])
            return self._emit(block, index, pieces, (event, data))
        # citations and other deltas: keep them in the text segment being written
        head = self._open_segment(block, index)
        assert block.out is not None
        return head + self._renumbered(event, data, block.out)

    def _text_stop(self, event: _Event, data: dict[str, Any], block: _Text, index: int) -> bytes:
        out = self._emit(block, index, block.scanner.finish(), None)
        if not block.emitted:  # an empty text block: keep it, as the message keeps it
            out += self._open_segment(block, index)
        if block.out is not None:
            out += self._renumbered(event, data, block.out)
        return out

    def _unstopped(self) -> bytes:
        """Blocks whose ``content_block_stop`` never came (a malformed stream) end before the
        message does: a recovered text block's held text, a refused call's explanation."""
        out = []
        for index, block in sorted(self._text.items()):
            out.append(self._emit(block, index, block.scanner.finish(), None))
            out.append(self._close_segment(block))
        self._text.clear()
        for index, found in sorted(self._errors.items()):
            stop = {"type": "content_block_stop", "index": index}
            out.append(
                self._unmapped(
                    _parse_event(self._frame("content_block_stop", stop)), stop, index, found
                )
            )
        return b"".join(out)

    def _message_delta(self, event: _Event, data: dict[str, Any]) -> bytes:
        delta = data.get("delta")
        if not isinstance(delta, dict):
            return event.raw
        stop = delta.get("stop_reason")
        if self.recovered and stop in RECOVERABLE_STOPS:
            stop = "tool_use"
        elif stop == "tool_use" and self._refused and not self.recovered and not self._calls:
            stop = "end_turn"  # every call was turned into text: nothing left to run
        if stop == delta.get("stop_reason"):
            return event.raw
        return _rebuild(event, {**data, "delta": {**delta, "stop_reason": stop}})

    # ---------------------------------------------------------- emitting
    def _emit(
        self,
        block: _Text,
        index: int,
        pieces: list[Any],
        source: tuple[_Event, dict[str, Any]] | None,
    ) -> bytes:
        out: list[bytes] = []
        for piece in merge_text(pieces):
            block.emitted = True
            if isinstance(piece, Recovered):
                out.append(self._close_segment(block))
                out.append(self._tool_use(piece))
                continue
            out.append(self._open_segment(block, index))
            if source is not None:
                event, data = source
                delta = data["delta"]
                if delta["text"] == piece and data.get("index") == block.out:
                    out.append(event.raw)
                else:
                    new = {**data, "index": block.out, "delta": {**delta, "text": piece}}
                    out.append(_rebuild(event, new))
            else:
                out.append(self._text_event(block, index, piece))
        return b"".join(out)

    def _open_segment(self, block: _Text, index: int) -> bytes:
        if block.out is not None:
            return b""
        block.out = self._next
        self._next += 1
        content = block.data.get("content_block")
        content = {**content, "text": ""} if isinstance(content, dict) else content
        if block.out == index and content == block.data.get("content_block"):
            return block.start.raw
        return _rebuild(block.start, {**block.data, "index": block.out, "content_block": content})

    def _close_segment(self, block: _Text) -> bytes:
        if block.out is None:
            return b""
        out = self._frame("content_block_stop", {"type": "content_block_stop", "index": block.out})
        block.out = None
        return out

    def _text_event(self, block: _Text, index: int, text: str) -> bytes:
        head = self._open_segment(block, index)
        delta = {
            "type": "content_block_delta",
            "index": block.out,
            "delta": {"type": "text_delta", "text": text},
        }
        return head + self._frame("content_block_delta", delta)

    def _tool_use(self, call: Recovered) -> bytes:
        index = self._next
        self._next += 1
        ident = call_id(self.message_id, self.recovered, call)
        if self.sealer is not None and call.notes:
            ident = self.sealer.seal(ident, call)
        block = {
            "type": "tool_use",
            "id": ident,
            "name": call.name,
            "input": {},
        }
        self.recovered += 1
        partial = jsonio.dumps(call.arguments).decode()
        return b"".join(
            [
                self._frame(
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": block},
                ),
                self._frame(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": partial},
                    },
                ),
                self._frame("content_block_stop", {"type": "content_block_stop", "index": index}),
            ]
        )

    def _frame(self, name: str, data: dict[str, Any]) -> bytes:
        eol = self._eol
        head = b"event: " + name.encode() + eol if self._named else b""
        return head + b"data: " + jsonio.dumps(data) + eol + eol


class TwoPassRewriter:
    """:class:`StreamRewriter` followed by :class:`SecondPass`; the same feed/close API."""

    def __init__(
        self,
        rt: Runtime,
        registered: Any = None,
        sealer: CallSealer | None = None,
        report: InboundReport | None = None,
    ) -> None:
        self.inner = StreamRewriter(rt, registered, sealer, report)
        self.recovery = SecondPass(rt, self.inner.registered, sealer, report)

    def feed(self, chunk: bytes) -> bytes:
        return self.recovery.events(self.inner.feed(chunk))

    def close(self) -> bytes:
        events, tail = split_complete(self.inner.close())
        done = self.recovery.events(b"".join(events))
        return done + self.recovery.close() + tail


class ChunkRewriter(Protocol):
    """Bytes in any chunking -> rewritten bytes; ``close()`` flushes the tail."""

    def feed(self, chunk: bytes) -> bytes: ...

    def close(self) -> bytes: ...


def open_rewriter(
    rt: Runtime,
    registered: Iterable[str] | None = None,
    sealer: CallSealer | None = None,
    report: InboundReport | None = None,
) -> ChunkRewriter:
    """The rewriter a stream needs: a second pass only for ``<tool_call>`` recovery or an
    ``inbound.unmapped`` policy."""
    if rt.plan.recover_tool_calls or rt.rules.unmapped != "pass":
        return TwoPassRewriter(rt, registered, sealer, report)
    return StreamRewriter(rt, registered, sealer, report)


def rewrite_stream(
    rt: Runtime,
    chunks: Iterable[bytes],
    registered: Iterable[str] | None = None,
    sealer: CallSealer | None = None,
    report: InboundReport | None = None,
) -> Iterator[bytes]:
    rw = open_rewriter(rt, registered, sealer, report)
    for chunk in chunks:
        out = rw.feed(chunk)
        if out:
            yield out
    tail = rw.close()
    if tail:
        yield tail


async def rewrite_stream_async(
    rt: Runtime,
    chunks: AsyncIterable[bytes],
    registered: Iterable[str] | None = None,
    sealer: CallSealer | None = None,
    report: InboundReport | None = None,
) -> AsyncIterator[bytes]:
    rw = open_rewriter(rt, registered, sealer, report)
    async for chunk in chunks:
        out = rw.feed(chunk)
        if out:
            yield out
    tail = rw.close()
    if tail:
        yield tail
