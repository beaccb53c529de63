"""``lint``'s findings as LSP diagnostics, and the words a request points at.

A finding keeps its code, severity and message; its ``file:line:col`` becomes a range over
the word written there (lint positions are 1-based starts); its hint follows the message
as ``lint`` prints it (``message; hint``); ``data`` carries the finding as ``lint --format
json`` writes it, so that a quick fix reads its candidates rather than computing them again.
"""

from __future__ import annotations

import re

from lsprotocol import types

from bridge_rules.diagnostics import Diagnostic, Severity

DOCS = "https://github.com/bridge-rules/bridge-rules/blob/main/docs/lint.md#checks"
SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}
_WORD = re.compile(r"[A-Za-z0-9_.*@/\-]+")
_TOKEN = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|[^\s,:\]\}\[\{#]+")


def word_range(lines: list[str], line: int, col: int) -> types.Range:
    """The token starting at 0-based ``line``/``col`` (a quoted string, or up to the next
    YAML delimiter); an empty range where there is none."""
    start = types.Position(line=line, character=col)
    if line >= len(lines):
        return types.Range(start=start, end=start)
    found = _TOKEN.match(lines[line], col)
    end = found.end() if found else col
    return types.Range(start=start, end=types.Position(line=line, character=end))


def to_lsp(diag: Diagnostic, lines: list[str]) -> types.Diagnostic:
    line, col = max(diag.span.line - 1, 0), max(diag.span.col - 1, 0)
    text = diag.message + (f"; {diag.hint}" if diag.hint else "")
    return types.Diagnostic(
        range=word_range(lines, line, col),
        message=text,
        severity=SEVERITY[diag.severity],
        code=diag.code,
        code_description=types.CodeDescription(href=f"{DOCS}-{diag.code.lower()}"),
        source="bridge-rules",
        data=diag.to_dict(),
    )


def word_at(lines: list[str], position: types.Position) -> tuple[str, types.Range] | None:
    """The name under the cursor (tool names, fields, codes, profile names)."""
    if position.line >= len(lines):
        return None
    text = lines[position.line]
    for found in _WORD.finditer(text):
        if found.start() <= position.character <= found.end():
            span = types.Range(
                start=types.Position(line=position.line, character=found.start()),
                end=types.Position(line=position.line, character=found.end()),
            )
            return found.group(), span
    return None


def quoted(message: str) -> list[str]:
    """The names a finding's message quotes ('X'), in order."""
    return re.findall(r"'([^'\n]*)'", message)
