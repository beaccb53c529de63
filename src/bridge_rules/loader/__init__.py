"""Read rule files: bytes -> plain data + a source map, with located errors.

This package is the only code that sees ruamel.yaml types (``events`` builds the
data from parse events). It hands plain
``dict``/``list``/``str``/``int``/``float``/``bool``/``None`` values and a
:class:`~bridge_rules.source.SourceMap` to everything else.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bridge_rules.diagnostics import Diagnostic, error
from bridge_rules.loader.events import C_PARSER, Builder, Refused, TooLarge, describe, parse_events
from bridge_rules.outside import kernel_filesystem
from bridge_rules.source import SourceMap, Span

__all__ = [
    "Document",
    "buffers",
    "describe",
    "kernel_directory",
    "parse_text",
    "read_bytes",
    "read_file",
    "rule_files_in",
]

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
    digest: str = ""
    """SHA-256 of the file's bytes as read (empty for text parsed from memory), for the
    rules hash that ``serve`` logs and ``/readyz`` shows."""


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
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    span = _span_from_mark(file, mark)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    context = getattr(exc, "context", None)
    text = f"{context}: {problem}" if context else str(problem)
    return error("BR003", f"YAML syntax error: {text}", span)


def _document_error(file: str, exc: Exception) -> Diagnostic:
    if isinstance(exc, Refused):
        return exc.diag
    if isinstance(exc, TooLarge):
        return error(
            "BR010",
            f"document expands to more than {MAX_NODES} nodes (alias bomb?)",
            Span(file, 1, 1),
        )
    diag = _yaml_error(file, exc)
    if "invalid Unicode character escape" in str(getattr(exc, "problem", "")):
        # libyaml refuses lone surrogates (and escapes above U+10FFFF) while scanning.
        msg = "string holds an escape that is not a Unicode character (a lone surrogate?)"
        return error("BR014", msg, diag.span)
    return diag


def _root(text: str, file: str, smap: SourceMap) -> tuple[Any, list[Diagnostic]]:
    """The one document of ``text``, built into plain data (``None`` for an empty file).

    libyaml parses; when it finds a syntax error, ruamel's own parser (slower, a
    little more lenient, and the author of the messages we document) has the last word.
    """
    data, diags = _build(text, file, smap, C_PARSER)
    if C_PARSER and diags and diags[0].code == "BR003":
        smap.clear()
        return _build(text, file, smap, False)
    return data, diags


def _build(text: str, file: str, smap: SourceMap, fast: bool) -> tuple[Any, list[Diagnostic]]:
    from ruamel.yaml.error import YAMLError

    builder = Builder(smap, MAX_NODES, fast)
    events = parse_events(text, fast)
    roots: list[Any] = []
    try:
        for event in events:
            kind = type(event).__name__
            if kind in ("StreamStartEvent", "StreamEndEvent", "DocumentEndEvent"):
                continue
            if kind == "DocumentStartEvent":
                if len([r for r in roots if r is not None]) >= 1:
                    msg = "a rule file holds one YAML document; found several"
                    return None, [error("BR007", msg, Span(file, 1, 1))]
                continue
            smap.add((), builder.span(event))
            roots.append(builder.node(event, events, (), 0))
    except (YAMLError, Refused, TooLarge) as exc:
        return None, [_document_error(file, exc)]
    except RecursionError:  # pragma: no cover - MAX_DEPTH keeps well below the limit
        return None, [error("BR010", "document is nested too deeply", Span(file, 1, 1))]
    found = [r for r in roots if r is not None]
    return (found[0] if found else None), []


def parse_text(text: str, file: str) -> tuple[Document | None, list[Diagnostic]]:
    """Parse one YAML document; report syntax errors, duplicates and bad shapes."""
    smap = SourceMap(file)
    data, diags = _root(text, file, smap)
    if diags:
        return None, diags
    first = smap.key_span(())
    if data is None:
        return None, [error("BR005", "rule file is empty", Span(file, 1, 1))]
    if not isinstance(data, dict):
        kind = "a list" if isinstance(data, list) else f"a {type(data).__name__} scalar"
        return None, [
            error("BR006", f"top level must be a mapping of rule sections, not {kind}", first)
        ]
    return Document(file, data, smap), []


def read_bytes(path: Path, name: str) -> tuple[bytes | None, list[Diagnostic]]:
    """At most ``MAX_FILE_BYTES`` of a regular file.

    Devices, FIFOs and sockets are refused before they are opened (``/dev/zero``
    never ends, a FIFO blocks ``open``), and so are the kernel's files under ``/proc`` and
    ``/sys`` (they report size 0 and yield bytes anyway, block, or are consumed by reading:
    ``/proc/kmsg``); the cap applies to the bytes actually read, not to what ``stat`` claims.
    """
    try:
        named = os.lstat(path)
        linked = stat.S_ISLNK(named.st_mode)
        found = os.stat(path) if linked else named
        refused = _not_a_rule_file(path, found, linked)
        if refused:
            return None, [error("BR001", f"expected a regular file, found {refused}", Span(name))]
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
        with os.fdopen(fd, "rb", buffering=0) as handle:
            opened = os.fstat(handle.fileno())
            if not stat.S_ISREG(opened.st_mode) or opened.st_dev != found.st_dev:
                # swapped after the check
                return None, [error("BR001", "expected a regular file", Span(name))]
            raw = _read_capped(handle, opened.st_size)
    except FileNotFoundError:
        return None, [error("BR001", "no such rule file", Span(name))]
    except OSError as exc:
        return None, [error("BR001", f"cannot read rule file: {exc.strerror}", Span(name))]
    except ValueError:  # a NUL byte in the name
        return None, [error("BR001", "a rule file's name holds a NUL byte", Span(name))]
    if raw is None:  # nothing to read without blocking: not a file on a disk
        return None, [error("BR001", "cannot read rule file without blocking", Span(name))]
    if len(raw) > MAX_FILE_BYTES:
        msg = f"rule file is over {MAX_FILE_BYTES} bytes, the limit"
        return None, [error("BR010", msg, Span(name))]
    return raw, []


def _read_capped(handle: Any, size: int) -> bytes | None:
    """At most ``MAX_FILE_BYTES + 1`` bytes, in reads sized by what ``stat`` said the file
    holds: one ``read(MAX_FILE_BYTES + 1)`` allocates 4 MiB a file (110 µs each, most of the
    time of loading 10,000 small files). None when a read would block."""
    chunks: list[bytes] = []
    total, want = 0, min(size, MAX_FILE_BYTES) + 1
    while total <= MAX_FILE_BYTES:
        chunk = handle.read(min(want, MAX_FILE_BYTES + 1 - total))
        if chunk is None:
            return None
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        want = 64 * 1024
    return b"".join(chunks)


def _not_a_rule_file(path: Path, found: os.stat_result, linked: bool) -> str:
    """What ``path`` is when it is not a regular file on a disk (empty when it is one)."""
    if not stat.S_ISREG(found.st_mode):
        return "a directory" if stat.S_ISDIR(found.st_mode) else "a device, FIFO or socket"
    kernel = kernel_filesystem(path, found.st_dev, linked)
    return f"a file of the kernel's {kernel} filesystem" if kernel else ""


def kernel_directory(path: Path, name: str) -> Diagnostic | None:
    """BR001 for a directory of the kernel's (``/proc``, ``/sys``): its entries are
    interfaces, not rule files, and walking it may never end."""
    try:
        kernel = kernel_filesystem(path, os.stat(path).st_dev)
    except (OSError, ValueError):
        return None
    if kernel is None:
        return None
    msg = f"expected a directory of rule files, found a directory of the kernel's {kernel}"
    return error("BR001", msg + " filesystem", Span(name))


_BUFFERS: ContextVar[Mapping[str, str] | None] = ContextVar("bridge_rules_buffers", default=None)


@contextmanager
def buffers(texts: Mapping[str, str]) -> Iterator[None]:
    """Within this block, read these texts (keyed by absolute path) in place of the files on
    disk: an editor's unsaved buffers, so that ``bridge-rules lsp`` checks what the user sees
    with this same loader and every check after it, never a second parser."""
    token = _BUFFERS.set(texts)
    try:
        yield
    finally:
        _BUFFERS.reset(token)


def read_file(path: Path, display: str | None = None) -> tuple[Document | None, list[Diagnostic]]:
    """Read and parse one rule file from disk (or from an editor's buffer, :func:`buffers`)."""
    name = display or str(path)
    opened = _BUFFERS.get()
    text = opened.get(os.path.abspath(path)) if opened else None
    if text is None:
        raw, diags = read_bytes(path, name)
    else:  # what the editor holds, encoded as saving it would
        raw, diags = text.encode("utf-8", "replace"), []
        if len(raw) > MAX_FILE_BYTES:
            raw, diags = (
                None,
                [error("BR010", f"rule file is over {MAX_FILE_BYTES} bytes", Span(name))],
            )
    if raw is None:
        return None, diags
    text, diags = _decode(raw, name)
    if text is None:
        return None, diags
    doc, diags = parse_text(text, name)
    if doc is None:
        return None, diags
    return replace(doc, digest=hashlib.sha256(raw).hexdigest()), diags


def _suffix(name: str) -> str:
    """The suffix of ``name`` wherever it is ``.yaml`` or ``.yml``, as ``Path(name).suffix``
    has it (``.yaml`` alone is a name, not a suffix), without making a Path per entry."""
    return os.path.splitext(name)[1]


def rule_files_in(directory: Path) -> list[Path]:
    """The rule files of a directory, in name order (``*.yaml`` and ``*.yml``). A FIFO, device
    or socket with such a name is listed too, so that reading it refuses it with its name
    rather than skipping it in silence."""
    with os.scandir(directory) as entries:  # the entry's type comes with the listing
        names = [e.name for e in entries if _suffix(e.name) in (".yaml", ".yml") and not e.is_dir()]
    return [directory / name for name in sorted(names)]
