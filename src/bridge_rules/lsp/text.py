"""One document's positions as the editor counts them, and as ``lint`` counts them.

``lint`` (through ruamel) counts a column in code points and a line at every YAML line
break, ``\\x85``, ``\\u2028`` and ``\\u2029`` included. An LSP client counts lines at
``\\n``, ``\\r\\n`` and ``\\r`` only, and a column in the code units of the position
encoding agreed at ``initialize``: UTF-16 unless the client offered UTF-8 or UTF-32 (pygls
picks the client's first choice it supports). An emoji is one code point, two UTF-16 units
and four UTF-8 bytes, so a range taken from a finding as it stands selects the wrong text on
any line with a character outside ASCII before it. Every position crossing the protocol
goes through :class:`Text`.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from lsprotocol import types

_LSP_BREAK = re.compile(r"\r\n|\r|\n")
_YAML_BREAK = re.compile(r"\r\n|[\r\n\x85\u2028\u2029]")
UTF8, UTF16, UTF32 = (
    types.PositionEncodingKind.Utf8.value,
    types.PositionEncodingKind.Utf16.value,
    types.PositionEncodingKind.Utf32.value,
)


def _starts(text: str, breaks: re.Pattern[str]) -> list[int]:
    return [0, *(found.end() for found in breaks.finditer(text))]


def units(text: str, encoding: str) -> int:
    """How many code units of ``encoding`` ``text`` takes (UTF-16 for anything unknown,
    as the protocol's default)."""
    if encoding == UTF32:
        return len(text)
    if encoding == UTF8:
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


class Text:
    """A document's text, its lines as the client numbers them, and the conversions."""

    def __init__(self, text: str, encoding: str = UTF16) -> None:
        self.encoding = encoding
        self._text = text
        self.ends_with_break = text.endswith(("\n", "\r"))
        self._starts = _starts(text, _LSP_BREAK)
        self._yaml = _starts(text, _YAML_BREAK)
        self.lines = [
            _LSP_BREAK.sub("", text[start:end])
            for start, end in zip(self._starts, [*self._starts[1:], len(text)], strict=True)
        ]
        if self.lines and self.lines[-1] == "" and len(self.lines) > 1:
            self.lines.pop()  # a final line break ends the last line; it starts none

    @property
    def source(self) -> str:
        """The text as the client holds it."""
        return self._text

    def located(self, line: int, col: int) -> tuple[int, int]:
        """A 0-based ``lint`` position (YAML lines, code points) as a client line and a
        code-point column in it."""
        if not self._text:
            return 0, 0
        start = self._yaml[min(max(line, 0), len(self._yaml) - 1)]
        offset = min(start + max(col, 0), len(self._text))
        at = bisect_right(self._starts, offset) - 1
        return at, offset - self._starts[at]

    def position(self, line: int, col: int) -> types.Position:
        """A client line and a code-point column in it, in the client's units."""
        if line >= len(self.lines):
            return types.Position(line=line, character=0)
        return types.Position(line=line, character=units(self.lines[line][:col], self.encoding))

    def range(self, line: int, start: int, end: int) -> types.Range:
        return types.Range(start=self.position(line, start), end=self.position(line, end))

    def column(self, position: types.Position) -> int:
        """The code-point column a client position points at; a unit inside a character
        (half of a surrogate pair) counts as that character, one past the line as its end."""
        if position.line >= len(self.lines):
            return 0
        line, count = self.lines[position.line], 0
        for index, char in enumerate(line):
            if count >= position.character:
                return index
            count += units(char, self.encoding)
            if count > position.character:
                return index
        return len(line)
