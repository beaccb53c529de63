"""Source positions: where in which rule file a key or value was written.

Everything downstream of the loader refers to rule text through these types, so
a diagnostic or an explain trace can always say ``file:line:col``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

# A path into a loaded YAML document: mapping keys and sequence indexes.
DocPath = tuple[str | int, ...]


def escape(text: str) -> str:
    """Control characters as escapes, so names cannot forge lines or colours in output."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else _escape_char(ch) for ch in text)


def _escape_char(ch: str) -> str:
    code = ord(ch)
    if ch == "\n":
        return "\\n"
    if ch == "\t":
        return "\\t"
    if ch == "\r":
        return "\\r"
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


@dataclass(frozen=True, order=True)
class Span:
    """A 1-based position in a file. ``line == 0`` means "the whole file"."""

    file: str
    line: int = 0
    col: int = 0

    def __str__(self) -> str:
        if self.line <= 0:
            return escape(self.file)
        return f"{escape(self.file)}:{self.line}:{self.col}"

    def to_dict(self) -> dict[str, object]:
        return {"file": self.file, "line": self.line, "col": self.col}


class SourceMap(Mapping[DocPath, Span]):
    """Positions of every key (and of every sequence item) in one document.

    ``key_span(path)`` is where the key that ends ``path`` was written;
    ``value_span(path)`` is where its value starts. Lookups fall back to the
    nearest ancestor so a diagnostic always has *some* location.
    """

    def __init__(self, file: str) -> None:
        self.file = file
        # path -> (key line, key col, value line, value col), 1-based. Spans are made
        # on lookup: a large table has hundreds of thousands of positions, few looked at.
        self._pos: dict[DocPath, tuple[int, int, int, int]] = {}

    def add(self, path: DocPath, key: Span, value: Span | None = None) -> None:
        value = value or key
        self._pos[path] = (key.line, key.col, value.line, value.col)

    def add_position(self, path: DocPath, key: tuple[int, int], value: tuple[int, int]) -> None:
        """``add`` with 1-based (line, col) pairs, for the loader's inner loop."""
        self._pos[path] = (*key, *value)

    def clear(self) -> None:
        self._pos.clear()

    def key_span(self, path: DocPath) -> Span:
        pos = self._nearest(path)
        return Span(self.file, pos[0], pos[1]) if pos else Span(self.file, 1, 1)

    def value_span(self, path: DocPath) -> Span:
        pos = self._nearest(path)
        return Span(self.file, pos[2], pos[3]) if pos else Span(self.file, 1, 1)

    def _nearest(self, path: DocPath) -> tuple[int, int, int, int] | None:
        for end in range(len(path), 0, -1):
            pos = self._pos.get(path[:end])
            if pos is not None:
                return pos
        return self._pos.get(())

    def __getitem__(self, path: DocPath) -> Span:
        pos = self._pos[path]
        return Span(self.file, pos[0], pos[1])

    def __iter__(self) -> Iterator[DocPath]:
        return iter(self._pos)

    def __len__(self) -> int:
        return len(self._pos)
