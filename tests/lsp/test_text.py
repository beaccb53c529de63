"""Positions converted between ``lint``'s count and an editor's, against a count of our own.

A finding is placed by YAML's count (lines broken at CR, LF, CRLF, U+0085, U+2028 and
U+2029; columns in code points); the editor counts lines at CR, LF and CRLF only and columns
in its position encoding's code units. For any text and any place in it, the oracle below
counts both by walking the characters one by one and encoding the line's head.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from lsprotocol import types

from bridge_rules.lsp.text import Text

CODEC = {"utf-8": ("utf-8", 1), "utf-16": ("utf-16-le", 2), "utf-32": ("utf-32-le", 4)}
PIECES = st.sampled_from(
    ["a", "é", "\u2028", "\u2029", "\x85", "\r", "\n", "\r\n", "\U0001f600", "名", " ", ":"]
)


def _count(text: str, offset: int, breaks: tuple[str, ...]) -> tuple[int, int]:
    """(line, index of the line's start) of ``offset``, breaking lines at ``breaks``."""
    line, start, index = 0, 0, 0
    while index < offset:
        step = 2 if text.startswith("\r\n", index) else 1
        if text[index : index + step] in breaks or text[index] in breaks:
            line, start = line + 1, index + step
        index += step
    return line, start


@given(st.lists(PIECES, max_size=30), st.data(), st.sampled_from(sorted(CODEC)))
def test_a_place_is_the_same_place_in_both_counts(
    pieces: list[str], data: st.DataObject, encoding: str
) -> None:
    text = "".join(pieces)
    # Any place that does not split a CRLF (one break for both counts).
    places = [0] + [len("".join(pieces[: i + 1])) for i in range(len(pieces))]
    places = [o for o in places if text[o - 1 : o + 1] != "\r\n"]
    offset = data.draw(st.sampled_from(places))
    yaml_line, yaml_start = _count(text, offset, ("\r\n", "\r", "\n", "\x85", "\u2028", "\u2029"))
    lsp_line, lsp_start = _count(text, offset, ("\r\n", "\r", "\n"))
    codec, width = CODEC[encoding]
    units = len(text[lsp_start:offset].encode(codec)) // width

    doc = Text(text, encoding)
    line, col = doc.located(yaml_line, offset - yaml_start)
    assert (line, col) == (lsp_line, offset - lsp_start)
    if line < len(doc.lines):
        assert doc.position(line, col) == types.Position(line=lsp_line, character=units)
        assert doc.column(types.Position(line=lsp_line, character=units)) == col
