"""Read rule files: bytes -> plain data + a source map, with located errors.

This is the only module that sees ruamel.yaml types. It hands plain
``dict``/``list``/``str``/``int``/``float``/``bool``/``None`` values and a
:class:`~bridge_rules.source.SourceMap` to everything else.
"""

from __future__ import annotations

import datetime
import math
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bridge_rules.diagnostics import Diagnostic, error
from bridge_rules.source import DocPath, SourceMap, Span, escape

MAX_FILE_BYTES = 4 * 1024 * 1024
# Aliases let a few lines of YAML expand to billions of nodes ("billion laughs").
# Rule files are small; anything past this is hostile or a mistake.
MAX_NODES = 200_000


@dataclass(frozen=True)
class Document:
    """One rule file, loaded: its plain data and where every key was written."""

    path: str
    data: dict[str, Any]
    source_map: SourceMap


class _TooLarge(Exception):
    pass


def _span_from_mark(file: str, mark: Any) -> Span:
    if mark is None:
        return Span(file, 1, 1)
    return Span(file, int(mark.line) + 1, int(mark.column) + 1)


def _decode(raw: bytes, file: str) -> tuple[str | None, list[Diagnostic]]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start]
        line = before.count(b"\n") + 1
        col = exc.start - (before.rfind(b"\n") + 1) + 1
        msg = f"file is not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})"
        return None, [error("BR002", msg, Span(file, line, col))]
    return text.removeprefix("\ufeff"), []


def _yaml_error(file: str, exc: Exception) -> Diagnostic:
    from ruamel.yaml.constructor import DuplicateKeyError

    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    span = _span_from_mark(file, mark)
    if isinstance(exc, DuplicateKeyError):
        key = str(getattr(exc, "problem", "")).split('"')
        name = key[1] if len(key) > 2 else "?"
        first = _span_from_mark(file, getattr(exc, "context_mark", None))
        return error(
            "BR004",
            f"duplicate key '{name}' (first defined at line {first.line})",
            span,
        )
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    context = getattr(exc, "context", None)
    text = f"{context}: {problem}" if context else str(problem)
    return error("BR003", f"YAML syntax error: {text}", span)


class _Refused(Exception):
    """A YAML construct rule files do not allow; carries its located diagnostic."""

    def __init__(self, diag: Diagnostic) -> None:
        super().__init__(diag.message)
        self.diag = diag


# Integers a rule file may hold: anything larger is a mistake or an attack, and the
# JSON the rules act on could not carry it faithfully to most clients anyway.
MAX_INT = 2**63 - 1
_TAGGED = "YAML tags are not supported in rule files"


def _pos(span: tuple[int, int] | list[int] | None, fallback: Span) -> Span:
    """A ruamel (line, col) pair as a span; merged or tagged nodes have none."""
    if not span or span[0] is None:
        return fallback
    return Span(fallback.file, int(span[0]) + 1, int(span[1]) + 1)


def _refuse(code: str, message: str, span: Span, hint: str | None = None) -> _Refused:
    return _Refused(error(code, message, span, hint=hint))


class _Copier:
    """Copy a ruamel tree into plain Python values, recording positions.

    Anything a plain JSON-like document cannot hold is refused with its position:
    tags, merge keys, non-string keys, non-finite or huge numbers, lone surrogates.
    """

    def __init__(self, smap: SourceMap, budget: int) -> None:
        from ruamel.yaml.comments import CommentedMap, CommentedSeq

        self.smap = smap
        self.budget = budget
        self._map = CommentedMap
        self._seq = CommentedSeq

    def copy(self, node: Any, path: DocPath, at: Span) -> Any:
        self.budget -= 1
        if self.budget < 0:
            raise _TooLarge
        kind = type(node)
        if kind is self._map:
            return self._copy_map(node, path, at)
        if kind is self._seq:
            self._untagged(node, at)
            items: list[Any] = []
            for index, value in enumerate(node):
                span = _pos(node.lc.data.get(index), at)
                child = (*path, index)
                self.smap.add(child, span)
                items.append(self.copy(value, child, span))
            return items
        return _scalar(node, at)

    def _untagged(self, node: Any, at: Span) -> None:
        tag = getattr(getattr(node, "tag", None), "value", None)
        if tag is not None:
            raise _refuse("BR011", f"{_TAGGED} (found '{escape(str(tag))}')", at)

    def _copy_map(self, node: Any, path: DocPath, at: Span) -> dict[str, Any]:
        self._untagged(node, at)
        if getattr(node, "merge", None):
            raise _refuse(
                "BR011",
                "YAML merge keys ('<<') are not supported in rule files",
                at,
                hint="write the keys out, or share them with 'extends'",
            )
        out: dict[str, Any] = {}
        positions = node.lc.data
        for key in node:
            where = positions.get(key)
            kspan = _pos(where[:2] if where else None, at)
            vspan = _pos(where[2:] if where else None, kspan)
            if not isinstance(key, str) or isinstance(key, _tagged_types()):
                what = describe(key)
                if isinstance(key, str):  # a tagged string
                    what = "a tagged value"
                elif isinstance(key, (tuple, list, dict)):
                    what += " (a complex key)"
                raise _refuse(
                    "BR012",
                    f"mapping keys must be strings, not {what}",
                    kspan,
                    hint="quote the key" if what in _QUOTABLE else None,
                )
            plain_key = _text(str(key), kspan)
            child = (*path, plain_key)
            self.smap.add(child, kspan, vspan)
            out[plain_key] = self.copy(node[key], child, vspan)
        return out


_QUOTABLE = ("a number", "a boolean", "null", "a date")


def _tagged_types() -> tuple[type, ...]:
    from ruamel.yaml.comments import TaggedScalar

    return (TaggedScalar,)


def describe(value: Any) -> str:
    """What kind of value this is, in words ("a number"), for messages that must not echo it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, (datetime.date, datetime.datetime)):
        return "a date"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (tuple, list)):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def _text(value: str, at: Span) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = f"\\u{ord(value[exc.start]):04x}"
        raise _refuse(
            "BR014", f"string holds a lone surrogate ({bad}), which is not valid Unicode", at
        ) from None
    return value


def _scalar(value: Any, at: Span) -> Any:
    from ruamel.yaml.scalarbool import ScalarBoolean

    # ruamel hands out subclasses (ScalarInt, ScalarFloat, ScalarBoolean is an
    # int); downstream code gets the builtin types.
    if value is None:
        return None
    if isinstance(value, (bool, ScalarBoolean)):
        return bool(value)
    if isinstance(value, int):
        if abs(value) > MAX_INT:
            raise _refuse("BR013", "integer out of range (more than 63 bits)", at)
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _refuse("BR013", f"number {value} is not finite", at, hint="use a finite number")
        return float(value)
    if isinstance(value, str) and not isinstance(value, _tagged_types()):
        return _text(str(value), at)
    if type(value) in (datetime.date, datetime.datetime):
        return value.isoformat()
    raise _refuse("BR011", _TAGGED, at)


def _first_long_number(text: str, file: str) -> Span | None:
    """Where the first plain scalar of more than 1,000 digits starts, if any."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError
    from ruamel.yaml.events import ScalarEvent

    try:
        for event in YAML(typ="rt", pure=True).parse(text):
            if isinstance(event, ScalarEvent) and event.style is None and len(event.value) > 1000:
                return _span_from_mark(file, event.start_mark)
    except YAMLError:
        return None
    return None


def parse_text(text: str, file: str) -> tuple[Document | None, list[Diagnostic]]:
    """Parse one YAML document; report syntax errors, duplicates and bad shapes."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    yaml = YAML(typ="rt", pure=True)
    yaml.allow_duplicate_keys = False
    try:
        docs = list(yaml.load_all(text))
    except YAMLError as exc:
        return None, [_yaml_error(file, exc)]
    except RecursionError:
        return None, [error("BR010", "document is nested too deeply", Span(file, 1, 1))]
    except (ValueError, TypeError, OverflowError) as exc:
        # Constructors raise plain errors: an integer with thousands of digits, a bad date.
        where = _first_long_number(text, file)
        if where is not None:
            return None, [error("BR013", "integer out of range (thousands of digits)", where)]
        reason = " ".join(str(exc).split())[:200]
        return None, [error("BR003", f"YAML value error: {reason}", Span(file, 1, 1))]

    docs = [d for d in docs if d is not None]
    if not docs:
        return None, [error("BR005", "rule file is empty", Span(file, 1, 1))]
    if len(docs) > 1:
        return None, [
            error("BR007", "a rule file holds one YAML document; found several", Span(file, 1, 1))
        ]
    root = docs[0]
    smap = SourceMap(file)
    first = Span(file, 1, 1)
    if hasattr(root, "lc"):
        first = Span(file, root.lc.line + 1, root.lc.col + 1)
    smap.add((), first)
    try:
        data = _Copier(smap, MAX_NODES).copy(root, (), first)
    except _Refused as exc:
        return None, [exc.diag]
    except _TooLarge:
        msg = f"document expands to more than {MAX_NODES} nodes (alias bomb?)"
        return None, [error("BR010", msg, first)]
    except RecursionError:
        return None, [error("BR010", "document is nested too deeply", first)]
    if not isinstance(data, dict):
        kind = "a list" if isinstance(data, list) else f"a {type(data).__name__} scalar"
        return None, [
            error("BR006", f"top level must be a mapping of rule sections, not {kind}", first)
        ]
    return Document(file, data, smap), []


def read_bytes(path: Path, name: str) -> tuple[bytes | None, list[Diagnostic]]:
    """At most ``MAX_FILE_BYTES`` of a regular file.

    Devices, FIFOs and sockets are refused before they are opened (``/dev/zero``
    never ends, a FIFO blocks ``open``), and the cap applies to the bytes actually
    read, not to what ``stat`` claims (``/proc`` files report size 0).
    """
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            kind = "a directory" if path.is_dir() else "a device, FIFO or socket"
            return None, [error("BR001", f"expected a regular file, found {kind}", Span(name))]
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):  # swapped after the check
                return None, [error("BR001", "expected a regular file", Span(name))]
            raw = handle.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        return None, [error("BR001", "no such rule file", Span(name))]
    except OSError as exc:
        return None, [error("BR001", f"cannot read rule file: {exc.strerror}", Span(name))]
    if len(raw) > MAX_FILE_BYTES:
        msg = f"rule file is over {MAX_FILE_BYTES} bytes, the limit"
        return None, [error("BR010", msg, Span(name))]
    return raw, []


def read_file(path: Path, display: str | None = None) -> tuple[Document | None, list[Diagnostic]]:
    """Read and parse one rule file from disk."""
    name = display or str(path)
    raw, diags = read_bytes(path, name)
    if raw is None:
        return None, diags
    text, diags = _decode(raw, name)
    if text is None:
        return None, diags
    return parse_text(text, name)


def rule_files_in(directory: Path) -> list[Path]:
    """The rule files of a directory, in name order (``*.yaml`` and ``*.yml``)."""
    files = [p for p in directory.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file()]
    return sorted(files, key=lambda p: p.name)
