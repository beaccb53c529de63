"""The ways an upstream may write one SSE event, each allowed by the SSE format or by JSON.

The product's byte readers look for keys and names as Anthropic writes them (compact JSON,
``event:``/``data:`` lines ended by LF) and fall back to parsing; a reader that trusts the
common spelling too far misses an event written otherwise. These writers owe nothing to the
product's code: JSON is written here character by character, and the SSE lines by the
format's own rules (a line ends at CR, LF or CRLF; one optional space after the colon; an
event's data may take several ``data:`` lines, joined by LF).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

# Characters a writer may put as a \u escape: Go's encoding/json escapes < > & by default,
# ensure_ascii writers every non-ASCII one, and any writer may escape any character.
ESCAPABLE = "<>&ü_" + "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def written(value: Any, escaped: frozenset[str] = frozenset(), upper: bool = False) -> str:
    """Compact JSON with each character of ``escaped`` in its strings (keys too) written as
    a ``\\u`` escape, its hex digits in ``upper`` case or not."""
    if isinstance(value, dict):
        pairs = (f"{written(k, escaped, upper)}:{written(v, escaped, upper)}" for k, v in
                 value.items())  # fmt: skip
        return "{" + ",".join(pairs) + "}"
    if isinstance(value, list):
        return "[" + ",".join(written(v, escaped, upper) for v in value) + "]"
    if isinstance(value, str):
        form = "\\u%04X" if upper else "\\u%04x"
        return '"' + "".join(form % ord(c) if c in escaped else json.dumps(c)[1:-1]
                             for c in value) + '"'  # fmt: skip
    return json.dumps(value)


@dataclass(frozen=True)
class Spelling:
    """How an upstream writes its events."""

    eol: bytes = b"\n"
    space: bytes = b" "  # after a field's colon, which the format strips if present
    escaped: frozenset[str] = frozenset()
    upper: bool = False  # the escapes' hex digits
    lines: int = 1  # data lines an event's JSON is spread over, cut after its commas
    named: bool = True  # an ``event:`` line; without one, the data's type names the event

    def event(self, name: str, data: Any) -> bytes:
        parts = _between_values(written(data, self.escaped, self.upper))
        size = max(1, -(-len(parts) // self.lines))
        text = [",".join(parts[i : i + size]) for i in range(0, len(parts), size)]
        lines = [b"event:" + self.space + name.encode()] if self.named else []
        lines += [b"data:" + self.space + line.encode() for line in ",\n".join(text).split("\n")]
        return self.eol.join(lines) + self.eol + self.eol


def _between_values(text: str) -> list[str]:
    """``text`` cut at the commas between its values (not those inside a string)."""
    parts, begin, inside, escape = [], 0, False, False
    for i, c in enumerate(text):
        if escape:
            escape = False
        elif c == "\\":
            escape = inside
        elif c == '"':
            inside = not inside
        elif c == "," and not inside:
            parts.append(text[begin:i])
            begin = i + 1
    return [*parts, text[begin:]]


def spellings(escapable: str = ESCAPABLE) -> st.SearchStrategy[Spelling]:
    return st.builds(
        Spelling,
        st.sampled_from([b"\n", b"\r\n", b"\r"]),
        st.sampled_from([b" ", b""]),
        st.frozensets(st.sampled_from(escapable), max_size=6),
        st.booleans(),
        st.integers(1, 3),
        st.booleans(),
    )


def data_of(stream: bytes) -> list[Any]:
    """Each complete event's data as JSON, read by the format's rules written out here."""
    found, data = [], []
    for line in re.split(rb"\r\n|\n|\r", stream):
        if not line and data:
            found.append(json.loads(b"\n".join(data)))
            data = []
        elif line.startswith(b"data:"):
            data.append(line[6:] if line[5:6] == b" " else line[5:])
    return found


COMMON = Spelling()
"""How every Anthropic endpoint writes: LF line ends, a space after the colon, compact JSON."""
