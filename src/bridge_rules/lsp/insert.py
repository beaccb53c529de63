"""How a quick fix adds one entry to a top-level list of a rule file (``suppress:``,
``bindings:``), so that the file still reads as YAML and means what it meant, plus the entry.

The entry is a one-line flow mapping, which fits a block list at any indentation and a flow
list alike. A list written some other way (a flow list over several lines, ``null``) gets no
fix rather than an edit that would break the file, and so does a file whose top level is
not a block mapping of keys at the line's start (a flow mapping, ``? key``, an indented
one), where a key added at the end would not be one of its keys. The list's key is found
where the loader read it, however it is quoted, never by its spelling alone: a
``"suppress": []`` got a second ``suppress:`` at the end, a duplicate key (BR004), an
error the fix made. Strings are written as YAML
double-quoted scalars that read back as the very same text: JSON's quoting would not do,
since YAML reads JSON's ``\\ud83d\\ude00`` as two lone surrogates rather than one emoji, and
a ``match:`` that no longer matches its finding is itself a finding (BR308).
"""

from __future__ import annotations

import re

from lsprotocol import types

from bridge_rules.loader import parse_text
from bridge_rules.lsp.text import Text

_ESCAPES = {"\\": "\\\\", '"': '\\"', "\t": "\\t", "\n": "\\n", "\r": "\\r"}
_PRINTABLE = re.compile(
    "[\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
)
"""What YAML prints as it is (its printable set), less line breaks and the BOM."""


_FLOW = re.compile(r"\s*(\[.*?\])\s*(?:#.*)?$")
"""A flow list on the key's line: the shortest ``[...]`` that only a comment follows."""


def yaml_quoted(text: str) -> str:
    """``text`` as a YAML double-quoted scalar: printable characters as they are, every
    other one (controls, line and paragraph separators, the BOM) as an escape."""
    out = []
    for char in text:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif _PRINTABLE.fullmatch(char):
            out.append(char)
        elif ord(char) <= 0xFF:
            out.append(f"\\x{ord(char):02x}")
        elif ord(char) <= 0xFFFF:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    return '"' + "".join(out) + '"'


def _top_keys(text: Text) -> dict[str, int] | None:
    """The client line of each top-level key, as the loader reads the file; None when it
    does not load, or when a top-level key is not at the start of its line."""
    doc, _ = parse_text(text.source, "<buffer>")
    if doc is None:
        return None
    lines: dict[str, int] = {}
    for name in doc.data:
        span = doc.source_map.key_span((name,))
        line, col = text.located(span.line - 1, span.col - 1)
        if col:
            return None
        lines[name] = line
    return lines


def add_entry(text: Text, key: str, entry: str) -> tuple[types.Range, str] | None:
    """Where to put ``entry`` (a flow mapping) in the top-level list ``key``, and the text to
    put there; the list is started at the end of the file when there is none."""
    lines = text.lines
    keys = _top_keys(text)
    if keys is None:
        return None
    if key not in keys:
        return _at_end(text, f"{key}:\n  - {entry}\n")
    index = keys[key]
    own = re.compile(rf"""(?:{re.escape(key)}|"{re.escape(key)}"|'{re.escape(key)}')\s*:(.*)$""")
    found = own.match(lines[index])
    if found is None:
        return None  # the key spelt with escapes, say: not a line this edit can read
    rest = found.group(1).strip()
    if not rest or rest.startswith("#"):
        indent = _item_indent(lines, index + 1)
        at = types.Position(line=index + 1, character=0)
        return types.Range(start=at, end=at), f"{indent}- {entry}\n"
    flow = _FLOW.match(lines[index], found.start(1))
    if flow:
        at = text.position(index, flow.end(1) - 1)
        inner = flow.group(1)[1:-1].strip()
        return types.Range(start=at, end=at), (", " if inner else "") + entry
    return None


def _item_indent(lines: list[str], start: int) -> str:
    """The indentation of the list's first item (YAML lets it be none), two spaces when the
    list is empty."""
    for line in lines[start:]:
        stripped = line.lstrip(" ")
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("- ") or stripped == "-":
            return line[: len(line) - len(stripped)]
        break
    return "  "


def _at_end(text: Text, added: str) -> tuple[types.Range, str]:
    """After the last line; a line break first when the file does not end with one."""
    if not text.lines or text.ends_with_break:
        end = types.Position(line=len(text.lines), character=0)
        return types.Range(start=end, end=end), added
    last = len(text.lines) - 1
    end = text.position(last, len(text.lines[last]))
    return types.Range(start=end, end=end), "\n" + added
