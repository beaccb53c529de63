"""Rewrite an Anthropic Messages SSE stream, chunk by chunk, byte-exact where nothing applies.

Framing is found on bytes (CR, LF and CRLF line ends; ``\\r`` and ``\\n`` never
occur inside a UTF-8 multi-byte sequence, so splitting there is safe at any
chunk boundary). Events are sorted by their bytes before any is parsed: event kinds
and block types are found as every producer writes them (not spelt with ``\\u``
escapes), and only an event that may change is parsed. A complete event is either
passed on as its original bytes or, when a rule applies, rebuilt with its own line
ending:

* ``content_block_start`` of a ``tool_use`` block: the name is mapped back at
  once (the name occurs only there);
* when the call's binding changes arguments (``adapts_arguments``), that block's
  ``input_json_delta`` events are held and replaced at ``content_block_stop`` by
  one delta carrying the adapted input. Input that does not parse (fine-grained
  streaming cut by ``max_tokens``) is released untouched;
* everything else (text, thinking, ping, comments, ``error`` after a 200) goes
  out as soon as its event is complete. An ``error`` releases held deltas first.

Malformed streams never lose arguments: a second ``content_block_start`` for a block
still held, and a ``message_delta`` or ``message_stop`` while blocks are held (their
``content_block_stop`` never came), first flush what is held, adapted when it parses as
a whole object and as received otherwise; the end of a truncated stream releases it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from bridge_rules import jsonio
from bridge_rules.calls import ToolCall, adapts_arguments, inbound_call
from bridge_rules.runtime import Runtime
from bridge_rules.transform.inbound import freeze
from bridge_rules.transform.references import references_in
from bridge_rules.transform.results import CallSealer
from bridge_rules.transform.unmapped import InboundReport

# Two line ends in a row end an event; a CR is a line end on its own only when no LF follows.
_BOUNDARY = re.compile(rb"(?:\r\n|\n|\r(?!\n))(?:\r\n|\n|\r(?!\n))")
_EOL = re.compile(rb"\r\n|\n|\r")
_WATCHED = (b"content_block_start", b"content_block_delta", b"content_block_stop", b"error")
_KINDS = frozenset(w.decode() for w in _WATCHED)
_START = b"content_block_start"


@dataclass
class _Held:
    wire: str
    id: Any = None
    raw: list[bytes] = field(default_factory=list)
    partial: list[str] = field(default_factory=list)
    clean: bool = True


@dataclass(slots=True)
class _Event:
    raw: bytes
    lines: list[bytes]
    eol: bytes
    name: str | None
    data_at: int  # index of the first data line, -1 when none
    data: bytes


def _parse_event(raw: bytes) -> _Event:
    """The event's fields. The shape every Anthropic endpoint sends (``event: NAME``, then
    ``data: JSON``, LF line ends) is read directly, the rest by :func:`_parse_lines`, which
    gives the same event for that shape."""
    if raw.startswith(b"event: ") and raw.endswith(b"\n\n"):
        second = raw.find(b"\n") + 1
        end = len(raw) - 2
        if (
            raw.startswith(b"data: ", second)
            and raw.find(b"\n", second) == end
            and b"\r" not in raw
        ):
            first, data = raw[: second - 1], raw[second:end]
            return _Event(
                raw, [first, data], b"\n", first[7:].decode("utf-8", "replace"), 1, data[6:]
            )
    return _parse_lines(raw)


def _parse_lines(raw: bytes) -> _Event:
    body = raw.rstrip(b"\r\n")
    if b"\r" in raw:
        m = _EOL.search(raw)
        eol = m.group() if m else b"\n"
        lines = _EOL.split(body) if body else []
    else:  # LF only, as every Anthropic endpoint sends: a plain split, no regex
        eol = b"\n"
        lines = body.split(b"\n") if body else []
    name: str | None = None
    data_parts: list[bytes] = []
    data_at = -1
    for i, line in enumerate(lines):
        if not line or line[:1] == b":":
            continue
        key, colon, value = line.partition(b":")
        if colon and value[:1] == b" ":
            value = value[1:]
        if key == b"event":
            name = value.decode("utf-8", "replace")
        elif key == b"data":
            if data_at < 0:
                data_at = i
            data_parts.append(value)
    return _Event(raw, lines, eol, name, data_at, b"\n".join(data_parts))


def _event_ends(buf: bytearray, pos: int) -> Iterator[int]:
    """Where each complete event in ``buf`` ends, looking from ``pos``."""
    if b"\r" not in buf:  # LF only: the boundary is a blank line, found without a regex
        while (at := buf.find(b"\n\n", pos)) >= 0:
            pos = at + 2
            yield pos
        return
    while (m := _BOUNDARY.search(buf, pos)) is not None:
        pos = m.end()
        if pos == len(buf) and buf[pos - 1] == 0x0D:  # a CR that may be half of CRLF
            return
        yield pos


def _is_data(line: bytes) -> bool:
    return line.startswith(b"data:") or line == b"data"


def _rebuild(event: _Event, data: Any) -> bytes:
    """The event with its data replaced; other fields, comments and the line ending kept."""
    payload = b"data: " + jsonio.dumps(data)
    lines = []
    for i, line in enumerate(event.lines):
        if i == event.data_at:
            lines.append(payload)
        elif not _is_data(line):
            lines.append(line)
    return event.eol.join(lines) + event.eol + event.eol


class StreamRewriter:
    """Feed bytes in any chunking; get rewritten bytes out. ``close()`` flushes the tail."""

    def __init__(
        self,
        rt: Runtime,
        registered: Iterable[str] | None = None,
        sealer: CallSealer | None = None,
        report: InboundReport | None = None,
    ) -> None:
        self.rt = rt
        self.registered = freeze(registered)
        self.sealer = sealer  # gives calls whose repair stripped a pipeline their sealed id
        self.report = report  # receives the names mapped back
        self._buf = bytearray()
        self._scan = 0
        self._held: dict[int, _Held] = {}

    def feed(self, chunk: bytes) -> bytes:
        if not chunk:
            return b""
        buf = self._buf
        buf += chunk
        out: list[bytes] = []
        start = 0
        for end in _event_ends(buf, self._scan):
            out.append(self._event(bytes(buf[start:end])))
            start = end
        if start:
            del buf[:start]
        self._scan = max(0, len(buf) - 3)
        return b"".join(out)

    def close(self) -> bytes:
        """The incomplete tail and any held deltas, as received."""
        tail = bytes(self._buf)
        self._buf.clear()
        self._scan = 0
        if tail and _BOUNDARY.search(tail):  # a last event ended by a lone CR
            tail = self._event(tail)
        return self._release_all() + tail

    # ---------------------------------------------------------- events
    def _event(self, raw: bytes) -> bytes:
        if not self._held and (_START not in raw or b"tool" not in raw):
            # With nothing held, only the start of a block whose type names a tool
            # (tool_use, tool_result, tool_search_...) can change anything.
            return raw
        if self._held and (b"message_delta" in raw or b"message_stop" in raw):
            flushed = self._flush_at_message_end(raw)
            if flushed is not None:
                return flushed
        if not (b"content_block_" in raw or b"error" in raw):  # none of _WATCHED
            return raw
        event = _parse_event(raw)
        kind = event.name
        if kind is not None:
            if kind not in _KINDS or (kind != "content_block_start" and not self._held):
                return raw
            if kind == "error":
                return self._release_all() + raw
        if event.data_at < 0:
            return raw
        try:
            data: Any = jsonio.loads(event.data)
        except jsonio.JSONDecodeError:
            return raw
        if kind is None and isinstance(data, dict) and isinstance(data.get("type"), str):
            kind = data["type"]
            if kind == "error":
                return self._release_all() + raw
        if not isinstance(data, dict):
            return raw
        if kind == "content_block_start":
            return self._start(event, data)
        index = data.get("index")
        if not isinstance(index, int) or index not in self._held:
            return raw
        held = self._held[index]
        if kind == "content_block_delta":
            delta = data.get("delta")
            held.raw.append(raw)
            if (
                isinstance(delta, dict)
                and delta.get("type") == "input_json_delta"
                and isinstance(delta.get("partial_json"), str)
            ):
                held.partial.append(delta["partial_json"])
            else:
                held.clean = False
            return b""
        if kind == "content_block_stop":
            del self._held[index]
            return self._stop(event, index, held)
        return raw

    def _start(self, event: _Event, data: dict[str, Any]) -> bytes:
        index = data.get("index")
        if isinstance(index, int) and index in self._held:  # a duplicate start: flush first
            return self._flush(index) + self._start(event, data)
        block = data.get("content_block")
        if not isinstance(block, dict) or block.get("type") != "tool_use":
            renamed = references_in(self.rt, block, self.registered)
            if renamed is block:
                return event.raw
            return _rebuild(event, {**data, "content_block": renamed})
        name = block.get("name")
        if not isinstance(name, str):
            return event.raw
        rt, reg = self.rt, self.registered
        new_block = block
        if adapts_arguments(rt, name, reg):
            args = block.get("input")
            if isinstance(args, dict) and args:  # whole input up front: adapt it here
                call = inbound_call(rt, name, args, reg)
                self._noted(block.get("id"), call)
                new_block = {**block, "name": call.name, "input": call.arguments}
            else:
                index = data.get("index")
                if isinstance(index, int):
                    self._held[index] = _Held(name, block.get("id"))
        if new_block is block:
            local = rt.inbound_name(name, reg)
            if local is not None and local != name:
                new_block = {**block, "name": local}
        if new_block is block:
            return event.raw
        if self.report is not None and new_block["name"] != name:
            self.report.rename(name, new_block["name"])
        return _rebuild(event, {**data, "content_block": new_block})

    def _stop(self, event: _Event, index: int, held: _Held) -> bytes:
        adapted = self._adapted(index, held, event.eol, event.name is not None)
        if adapted is None:
            return b"".join(held.raw) + event.raw
        return adapted + event.raw

    def _adapted(self, index: int, held: _Held, eol: bytes, named: bool) -> bytes | None:
        """The one delta carrying the adapted input, or None when the held input is not
        a whole JSON object (it is then released as received)."""
        text = "".join(held.partial)
        args: Any = None
        if held.clean:
            try:
                args = jsonio.loads(text) if text.strip() else {}
            except jsonio.JSONDecodeError:
                args = None
        if not isinstance(args, dict):
            return None
        call = inbound_call(self.rt, held.wire, args, self.registered)
        self._noted(held.id, call)
        delta = {
            "type": "content_block_delta",
            "index": index,
            "delta": {
                "type": "input_json_delta",
                "partial_json": jsonio.dumps(call.arguments).decode(),
            },
        }
        head = b"event: content_block_delta" + eol if named else b""
        return head + b"data: " + jsonio.dumps(delta) + eol + eol

    # ------------------------------------------------ malformed streams
    def _flush_at_message_end(self, raw: bytes) -> bytes | None:
        """Held blocks whose stop never came go out before the message ends."""
        event = _parse_event(raw)
        kind = event.name
        if kind is None and event.data_at >= 0:
            try:
                data = jsonio.loads(event.data)
            except jsonio.JSONDecodeError:
                return None
            kind = data.get("type") if isinstance(data, dict) else None
        if kind not in ("message_delta", "message_stop"):
            return None
        return b"".join(self._flush(index) for index in sorted(self._held)) + raw

    def _flush(self, index: int) -> bytes:
        """One held block without its stop: its deltas adapted into one (when they parse as
        a whole object), else as received."""
        held = self._held.pop(index)
        if not held.raw:
            return b""
        first = _parse_event(held.raw[0])
        adapted = self._adapted(index, held, first.eol, first.name is not None)
        return b"".join(held.raw) if adapted is None else adapted

    def _noted(self, call_id: Any, call: ToolCall) -> None:
        return  # the held start that a sealed id needs comes with the framing rework

    def _release_all(self) -> bytes:
        if not self._held:
            return b""
        out = b"".join(b"".join(h.raw) for _, h in sorted(self._held.items()))
        self._held.clear()
        return out
