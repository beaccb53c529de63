"""The canonical text form: ``file:line:col: severity[CODE] message``, one line each."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from bridge_rules.diagnostics import Diagnostic
from bridge_rules.reporters import Summary
from bridge_rules.source import escape


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def summary_line(summary: Summary) -> str:
    parts = [_plural(summary.errors, "error"), _plural(summary.warnings, "warning")]
    text = ", ".join(parts) + f" in {_plural(summary.rule_sets, 'rule set')}"
    if summary.suppressed:
        text += f" ({summary.suppressed} suppressed)"
    return text


def report(diags: Sequence[Diagnostic], summary: Summary, stream: TextIO) -> None:
    for diag in diags:
        stream.write(diag.line() + "\n")
        for rel in diag.related:
            stream.write(f"  {rel.span}: note: {escape(rel.message)}\n")
    stream.write(summary_line(summary) + "\n")
