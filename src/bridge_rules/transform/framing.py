"""SSE framing: a byte stream cut into complete events once, for every pass that reads it.

A stream goes through one :class:`Framer` (CR, LF and CRLF line ends; ``\\r`` and
``\\n`` never occur inside a UTF-8 multi-byte sequence, so cutting there is safe at
any chunk boundary). Each feed looks only at the bytes it has not looked at yet, so a
stream costs time linear in its length, and memory linear in its largest event, which
an optional cap bounds (:class:`EventTooLarge`).

What comes out is :class:`Framed`: the complete events of one feed, as received, in
one ``bytes``. A pass that only needs to know whether anything in it concerns it asks
the bytes (``b"tool" in run``), and a run nothing concerns goes on unsplit; a pass that
does care takes :meth:`Framed.events`, split once and kept, so the passes after it
reuse the same :class:`Event` objects. An event parses its fields and its JSON on
first use and keeps them; an event a pass rebuilds from data carries that data, so no
pass parses another's output (one it edits as bytes, a tool start renamed in place, is
parsed by a later pass only if that pass reads it).
"""

from __future__ import annotations

import re
from typing import Protocol

from bridge_rules.transform.events import NOT_JSON, Event, Fields, parse_lines

# Two line ends in a row end an event; a CR is a line end on its own only when no LF follows.
_BOUNDARY = re.compile(rb"(?:\r\n|\n|\r(?!\n))(?:\r\n|\n|\r(?!\n))")
_SLICED = 1 << 16  # a run of complete events up to this size leaves the buffer as a slice
_SKIM_HEAD = 256  # bytes of an oversized event a skimming framer keeps (its name and type)


class EventTooLarge(Exception):
    """One SSE event grew past the cap before its end arrived."""

    def __init__(self, cap: int) -> None:
        super().__init__(f"an SSE event exceeded {cap} bytes")
        self.cap = cap


class Framed(bytes):
    """Complete events, as received, in one ``bytes`` (which the proxy can pass to any
    rewriter): split into :class:`Event` objects on first use, once."""

    cr = False  # a CR was seen in the stream: cut by the regex
    _events: list[Event] | None = None

    @property
    def raw(self) -> bytes:
        return self

    def events(self) -> list[Event]:
        if self._events is None:
            self._events = [Event(raw) for raw in split(self, self.cr)]
        return self._events

    @property
    def whole(self) -> bool:
        """Not split yet, and cut only at LF boundaries: :meth:`after` works."""
        return self._events is None and not self.cr

    def after(self, at: int, since: int) -> int:
        """Where the event begins that follows the ``\\n\\n`` found last at ``at`` (-1:
        none) when one begins at ``since`` (only for a :attr:`whole` run): the cut
        :meth:`events` would make there, without making the others."""
        return since if at < 0 else _paired(self, at, since)

    def part(self, begin: int, end: int) -> Framed:
        """Some of the events of a :attr:`whole` run (LF boundaries only)."""
        return Framed(self[begin:end])


def framed(data: bytes | bytearray, cr: bool) -> Framed:
    run = Framed(data)
    if cr:
        run.cr = True
    return run


def split(data: bytes, cr: bool = True) -> list[bytes]:
    """Complete events, each with its boundary; ``data`` ends with one."""
    if not cr:
        parts = data.split(b"\n\n")
        parts.pop()
        return [p + b"\n\n" for p in parts]
    out, start = [], 0
    for m in _BOUNDARY.finditer(data):
        out.append(data[start : m.end()])
        start = m.end()
    return out


def _paired(data: bytes | bytearray, at: int, since: int) -> int:
    """Where the boundary ends that a run of LFs ending with the ``\\n\\n`` at ``at`` holds
    last, when an event begins at ``since``: the run is cut in pairs from its first LF, as
    reading from ``since`` (and :func:`split`) cuts it."""
    first = at
    while first > since and data[first - 1] == 0x0A:
        first -= 1
    return first + (at + 2 - first) // 2 * 2


def _last_end(buf: bytes | bytearray, start: int, cr: bool) -> int:
    """Where the last complete event in ``buf`` ends, looking from ``start``; -1 if none.

    Linear in ``len(buf) - start``: the caller passes the bytes not looked at yet (with
    the three before them, where a boundary may have begun)."""
    if not cr:
        at = buf.rfind(b"\n\n", start)
        if at < 1 or buf[at - 1] != 0x0A:
            return at + 2 if at >= 0 else -1
        return _paired(buf, at, 0)
    last = prev = -1
    for m in _BOUNDARY.finditer(buf, start):
        prev, last = last, m.end()
    if last == len(buf) and buf[-1] == 0x0D:  # a CR that may be half of a CRLF
        return prev
    return last


class Framer:
    """Bytes in any chunking -> :class:`Framed` runs of complete events.

    ``cap``: the most bytes one event may reach before its end; past it :meth:`feed`
    raises :class:`EventTooLarge`, or, with ``skim``, keeps only the event's first bytes
    (enough for its name and type) and goes on looking for its end: for a watcher of a
    stream passed on as received, whose memory must stay bounded too.
    """

    def __init__(self, cap: int | None = None, *, skim: bool = False) -> None:
        self.cap = cap
        self.skim = skim
        self.cr = False  # a CR was seen: boundaries are found by the regex from then on
        self._buf = bytearray()

    @property
    def pending(self) -> int:
        """Bytes of an incomplete event held."""
        return len(self._buf)

    def feed(self, chunk: bytes) -> Framed | None:
        if not chunk:
            return None
        cr = self.cr
        if not cr and chunk.find(b"\r") >= 0:  # find is memchr; ``in`` is not
            cr = self.cr = True
        buf = self._buf
        run = None
        if not buf:  # the common case: the chunk starts an event
            end = _last_end(chunk, 0, cr)
            if end == len(chunk):
                return framed(chunk, cr)
            if end > 0:
                run = framed(chunk[:end], cr)
                chunk = chunk[end:]
            buf += chunk
        else:
            seen = len(buf)
            buf += chunk
            if cr:
                end = _last_end(buf, max(0, seen - 3), cr)
            else:  # _last_end's first case, inlined: a call costs as much as the search
                end = buf.rfind(b"\n\n", seen - 1)
                if end > 0 and buf[end - 1] == 0x0A:
                    end = _paired(buf, end, 0)
                elif end >= 0:
                    end += 2
            if end > _SLICED:  # the buffer let go first: a long event takes twice its size
                with memoryview(buf) as view:
                    done = bytes(view[:end])
                del buf[:end]
                run = framed(done, cr)
            elif end > 0:  # a few KiB: slicing costs less than a view
                run = framed(buf[:end], cr)
                del buf[:end]
        if self.cap is not None and len(buf) > self.cap:
            if not self.skim:
                raise EventTooLarge(self.cap)
            if len(buf) > _SKIM_HEAD + 4:  # the head, a byte no boundary includes, the last 3
                buf[_SKIM_HEAD:-3] = b"\0"
        return run

    def close(self) -> tuple[Framed | None, bytes]:
        """The last event when only a lone CR ended it, and the incomplete tail."""
        tail = bytes(self._buf)
        self._buf.clear()
        if tail and self.cr and _BOUNDARY.search(tail):
            return framed(tail, True), b""
        return None, tail


Piece = Framed | Event
"""What passes hand on: a run of events nothing changed, or one event."""


class Pass(Protocol):
    """One job over the events of a stream, in order."""

    def run(self, pieces: list[Piece]) -> list[Piece]: ...

    def close(self, pieces: list[Piece]) -> list[Piece]:
        """The last pieces, then whatever the pass still holds."""
        ...


def events_in(piece: Piece) -> list[Event]:
    return [piece] if type(piece) is Event else piece.events()  # type: ignore[union-attr]


def joined(pieces: list[Piece]) -> bytes:
    return b"".join([p if type(p) is Framed else p.raw for p in pieces])  # no property call


class EventStream:
    """Bytes in any chunking -> the passes' output bytes; ``close()`` flushes the tail.

    A :class:`Framed` chunk (framed once already, e.g. by the proxy, which caps and
    watches the events) goes to the passes as it is."""

    def __init__(self, passes: list[Pass], framer: Framer | None = None) -> None:
        self.passes = passes
        self.framer = framer or Framer()

    def feed(self, chunk: bytes) -> bytes:
        if type(chunk) is Framed and not self.framer._buf:
            run: Framed | None = chunk
        else:
            run = self.framer.feed(chunk)
        if run is None:
            return b""
        pieces: list[Piece] = [run]
        for p in self.passes:
            pieces = p.run(pieces)
        if len(pieces) == 1 and pieces[0] is run:  # nothing touched
            return run
        return joined(pieces)

    def close(self) -> bytes:
        last, tail = self.framer.close()
        pieces: list[Piece] = [last] if last is not None else []
        for p in self.passes:
            pieces = p.close(pieces)
        return joined(pieces) + tail if pieces else tail


__all__ = [
    "NOT_JSON",
    "Event",
    "EventStream",
    "EventTooLarge",
    "Fields",
    "Framed",
    "Framer",
    "Pass",
    "Piece",
    "events_in",
    "framed",
    "joined",
    "parse_lines",
    "split",
]
