"""``lint``'s findings as LSP diagnostics, and the words a request points at.

A finding keeps its code, severity and message; its ``file:line:col`` becomes a range over
the word written there (lint positions are 1-based starts, in code points; the range is in
the client's units, :mod:`~bridge_rules.lsp.text`); its hint follows the message as ``lint``
prints it (``message; hint``); its related notes ("also resolves here") become related
information; ``data`` carries the finding as ``lint --format json`` writes it, so that a
quick fix reads its candidates rather than computing them again.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from lsprotocol import types

from bridge_rules.diagnostics import Diagnostic, Severity
from bridge_rules.lsp.text import Text

DOCS = "https://github.com/bridge-rules/bridge-rules/blob/main/docs/lint.md#checks"
SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}
TextOf = Callable[[str], tuple[str, Text]]
"""A file as a finding names it, to its absolute path and its text (open buffer or disk)."""
_WORD = re.compile(r"[A-Za-z0-9_.*@/\-]+")
_TOKEN = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|[^\s,:\]\}\[\{#]+")


def word_range(text: Text, line: int, col: int) -> types.Range:
    """The token at a 0-based ``lint`` position (a quoted string, or up to the next YAML
    delimiter), in the client's units; an empty range where there is none."""
    line, col = text.located(line, col)
    if line >= len(text.lines):
        return text.range(line, col, col)
    found = _TOKEN.match(text.lines[line], col)
    return text.range(line, col, found.end() if found else col)


def to_lsp(diag: Diagnostic, text: Text, text_of: TextOf) -> types.Diagnostic:
    """``text_of`` gives another file's absolute path and text, for a related note there."""
    related = []
    for note in diag.related:
        path, other = text_of(note.span.file)
        related.append(
            types.DiagnosticRelatedInformation(
                location=types.Location(
                    uri=Path(path).as_uri(),
                    range=word_range(other, note.span.line - 1, note.span.col - 1),
                ),
                message=note.message,
            )
        )
    return types.Diagnostic(
        range=word_range(text, diag.span.line - 1, diag.span.col - 1),
        message=diag.message + (f"; {diag.hint}" if diag.hint else ""),
        severity=SEVERITY[diag.severity],
        code=diag.code,
        code_description=types.CodeDescription(href=f"{DOCS}-{diag.code.lower()}"),
        source="bridge-rules",
        related_information=related or None,
        data=diag.to_dict(),
    )


def word_at(text: Text, position: types.Position) -> tuple[str, types.Range] | None:
    """The name under the cursor (tool names, fields, codes, profile names), and its range
    in the client's units."""
    if position.line >= len(text.lines):
        return None
    col = text.column(position)
    for found in _WORD.finditer(text.lines[position.line]):
        if found.start() <= col <= found.end():
            return found.group(), text.range(position.line, found.start(), found.end())
    return None


def quoted(message: str) -> list[str]:
    """The names a finding's message quotes ('X'), in order."""
    return re.findall(r"'([^'\n]*)'", message)


def token_on(text: Text, line: int, name: str) -> types.Range | None:
    """The one token on ``line`` (a client line) that spells ``name``, quoted or not; None
    when there is none or more than one."""
    if line >= len(text.lines):
        return None
    found = [
        hit
        for hit in _TOKEN.finditer(text.lines[line])
        if hit.group() == name or (hit.group()[:1] in "'\"" and hit.group()[1:-1] == name)
    ]
    return text.range(line, found[0].start(), found[0].end()) if len(found) == 1 else None
