"""GitHub Actions workflow commands: each finding becomes an annotation on the pull request.

Format: ``::error file=F,line=L,col=C,title=BR301::message``. Values are escaped
as the runner expects (``%``, CR and LF everywhere; ``:`` and ``,`` in properties).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from bridge_rules.diagnostics import Diagnostic, Severity
from bridge_rules.reporters import Summary
from bridge_rules.reporters.text import summary_line

_COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def report(diags: Sequence[Diagnostic], summary: Summary, stream: TextIO) -> None:
    for diag in diags:
        props = [f"file={_prop(diag.span.file)}"]
        if diag.span.line > 0:
            props += [f"line={diag.span.line}", f"col={diag.span.col}"]
        props.append(f"title={_prop(diag.code)}")
        message = diag.message + (f"; {diag.hint}" if diag.hint else "")
        for rel in diag.related:
            message += f"\n{rel.span}: {rel.message}"
        stream.write(f"::{_COMMAND[diag.severity]} {','.join(props)}::{_data(message)}\n")
    stream.write(summary_line(summary) + "\n")
