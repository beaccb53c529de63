"""One SSE event: its bytes as received, its fields and its JSON read on first use and kept.

Split from :mod:`bridge_rules.transform.framing`, which cuts a stream into these: a pass
that rebuilds an event from data hands that data on, so no pass parses another's output.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from bridge_rules import jsonio

_EOL = re.compile(rb"\r\n|\n|\r")
# The shape every Anthropic endpoint sends: an event line, one data line, LF line ends.
_SHAPE = re.compile(rb"event: ([^\r\n]*)\ndata: ([^\r\n]*)\n\n")
NOT_JSON: Any = object()
"""What :meth:`Event.json` gives for an event without data, or whose data is not JSON."""
_UNPARSED: Any = object()


class Fields(NamedTuple):
    """An event's lines, as the SSE format reads them."""

    lines: list[bytes]
    eol: bytes
    name: str | None
    data_at: int  # index of the first data line, -1 when none
    data: bytes


def parse_lines(raw: bytes) -> Fields:
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
    return Fields(lines, eol, name, data_at, b"\n".join(data_parts))


def _is_data(line: bytes) -> bool:
    return line.startswith(b"data:") or line == b"data"


_NAMES = {
    n.encode(): n
    for n in (
        "message_start",
        "message_delta",
        "message_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "ping",
        "error",
    )
}


class Event:
    """One complete event: its bytes as they go out, its name, its data and the data parsed
    as JSON, each worked out on first use and kept."""

    __slots__ = ("_data", "_fields", "_json", "_name", "_shaped", "raw")

    def __init__(self, raw: bytes, data: Any = _UNPARSED) -> None:
        self.raw = raw
        self._name: Any = _UNPARSED
        self._data: bytes | None = None
        self._shaped = False  # the event has the common shape
        self._fields: Fields | None = None
        self._json = data

    def _read(self) -> None:
        """Name and data. The shape every Anthropic endpoint sends (``event: NAME``, then
        ``data: JSON``, LF line ends) is read directly, the rest by :func:`parse_lines`."""
        m = _SHAPE.fullmatch(self.raw)
        if m is not None:
            name, self._data = m.groups()
            self._name = _NAMES.get(name) or name.decode("utf-8", "replace")
            self._shaped = True
            return
        fields = self.fields
        self._name = fields.name
        self._data = fields.data if fields.data_at >= 0 else None

    @property
    def fields(self) -> Fields:
        if self._fields is None:
            self._fields = parse_lines(self.raw)
        return self._fields

    @property
    def name(self) -> str | None:
        if self._name is _UNPARSED:
            self._read()
        return self._name  # type: ignore[no-any-return]

    @property
    def data(self) -> bytes | None:
        """The data lines' values, joined; None when the event has no data line."""
        if self._name is _UNPARSED:
            self._read()
        return self._data

    def json(self) -> Any:
        """The data parsed as JSON; :data:`NOT_JSON` when there is none or it does not parse."""
        if self._json is _UNPARSED:
            if self._name is _UNPARSED:
                self._read()
            try:
                data = self._data
                self._json = NOT_JSON if data is None else jsonio.loads_answer(data)
            except jsonio.JSONDecodeError:
                self._json = NOT_JSON
        return self._json

    @property
    def kind(self) -> str | None:
        """The ``event:`` name, or the data's ``type`` when the event has no name."""
        name = self._name
        if name is _UNPARSED:
            self._read()
            name = self._name
        if name is not None:
            return name  # type: ignore[no-any-return]
        data = self.json()
        kind = data.get("type") if isinstance(data, dict) else None
        return kind if isinstance(kind, str) else None

    @property
    def eol(self) -> bytes:
        """The line end new events written like this one use."""
        if b"\r" not in self.raw:
            return b"\n"
        return self.fields.eol

    def with_data(self, data: Any) -> Event:
        """This event with its data replaced; other fields, comments and the line end kept."""
        if self._name is _UNPARSED:
            self._read()
        if self._shaped:  # the event line as it came, then the new data line
            head = self.raw[: self.raw.index(b"\n") + 1]
            return Event(head + b"data: " + jsonio.dumps(data) + b"\n\n", data)
        fields = self.fields
        payload = b"data: " + jsonio.dumps(data)
        lines = []
        for i, line in enumerate(fields.lines):
            if i == fields.data_at:
                lines.append(payload)
            elif not _is_data(line):
                lines.append(line)
        eol = fields.eol
        return Event(eol.join(lines) + eol + eol, data)

    @staticmethod
    def made(name: str, data: Any, eol: bytes = b"\n", named: bool = True) -> Event:
        """A new event, written like the stream's own (its line end; an ``event:`` line
        when the stream's events have one)."""
        if eol == b"\n" and named:
            return Event(b"event: %s\ndata: %s\n\n" % (name.encode(), jsonio.dumps(data)), data)
        head = b"event: " + name.encode() + eol if named else b""
        return Event(head + b"data: " + jsonio.dumps(data) + eol + eol, data)
