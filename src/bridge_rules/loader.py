"""Read rule files: bytes -> plain data + a source map, with located errors.

This is the only module that sees ruamel.yaml types. It hands plain
``dict``/``list``/``str``/``int``/``float``/``bool``/``None`` values and a
:class:`~bridge_rules.source.SourceMap` to everything else.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bridge_rules.diagnostics import Diagnostic, error
from bridge_rules.source import DocPath, SourceMap, Span

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


def _to_plain(node: Any, path: DocPath, smap: SourceMap, budget: list[int]) -> Any:
    """Copy a ruamel tree into plain Python values, recording positions."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    budget[0] -= 1
    if budget[0] < 0:
        raise _TooLarge
    file = smap.file
    if isinstance(node, CommentedMap):
        out: dict[Any, Any] = {}
        for key in node:
            kline, kcol = node.lc.key(key)
            vline, vcol = node.lc.value(key)
            plain_key = _scalar(key)
            child = (*path, plain_key)
            smap.add(child, Span(file, kline + 1, kcol + 1), Span(file, vline + 1, vcol + 1))
            out[plain_key] = _to_plain(node[key], child, smap, budget)
        return out
    if isinstance(node, CommentedSeq):
        items: list[Any] = []
        for index, value in enumerate(node):
            line, col = node.lc.item(index)
            child = (*path, index)
            smap.add(child, Span(file, line + 1, col + 1))
            items.append(_to_plain(value, child, smap, budget))
        return items
    return _scalar(node)


def _scalar(value: Any) -> Any:
    from ruamel.yaml.scalarbool import ScalarBoolean

    # ruamel hands out subclasses (ScalarInt, ScalarFloat, ScalarBoolean is an
    # int); downstream code gets the builtin types.
    if value is None:
        return None
    if isinstance(value, (bool, ScalarBoolean)):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    return str(value)


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
    except (ValueError, TypeError, RecursionError) as exc:  # pragma: no cover - defensive
        return None, [error("BR003", f"YAML syntax error: {exc}", Span(file, 1, 1))]

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
        data = _to_plain(root, (), smap, [MAX_NODES])
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


def read_file(path: Path, display: str | None = None) -> tuple[Document | None, list[Diagnostic]]:
    """Read and parse one rule file from disk."""
    name = display or str(path)
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            msg = f"rule file is {size} bytes; the limit is {MAX_FILE_BYTES}"
            return None, [error("BR010", msg, Span(name))]
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, [error("BR001", "no such rule file", Span(name))]
    except IsADirectoryError:
        return None, [error("BR001", "expected a file, found a directory", Span(name))]
    except OSError as exc:
        return None, [error("BR001", f"cannot read rule file: {exc.strerror}", Span(name))]
    text, diags = _decode(raw, name)
    if text is None:
        return None, diags
    return parse_text(text, name)


def rule_files_in(directory: Path) -> list[Path]:
    """The rule files of a directory, in name order (``*.yaml`` and ``*.yml``)."""
    files = [p for p in directory.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file()]
    return sorted(files, key=lambda p: p.name)
