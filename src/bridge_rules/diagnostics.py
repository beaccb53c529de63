"""Problems as data.

Every phase (loader, validation, compiler, lint) returns a list of
:class:`Diagnostic`; nothing is raised one at a time. Only the CLI turns them
into an exit code, and only reporters turn them into text.
"""

from __future__ import annotations

import difflib
import enum
from collections.abc import Iterable
from dataclasses import dataclass, field

from bridge_rules.source import Span, escape

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3


def did_you_mean(word: str, options: Iterable[str], cutoff: float = 0.6) -> str | None:
    """``did you mean 'X'?`` for the closest option (case-insensitive first), else None."""
    options = list(options)
    folded = next((o for o in options if o.lower() == word.lower() and o != word), None)
    match = [folded] if folded else difflib.get_close_matches(word, options, n=1, cutoff=cutoff)
    return f"did you mean '{match[0]}'?" if match else None


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True)
class Related:
    """A second location that explains the first (e.g. the rule that wins)."""

    message: str
    span: Span


@dataclass(frozen=True)
class Diagnostic:
    code: str
    severity: Severity
    message: str
    span: Span
    related: tuple[Related, ...] = field(default=())
    hint: str | None = None

    @property
    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.span.file, self.span.line, self.span.col, self.code, self.message)

    def line(self) -> str:
        """The canonical one-line form: ``file:line:col: severity[CODE] message``."""
        text = f"{self.span}: {self.severity.value}[{self.code}] {escape(self.message)}"
        if self.hint:
            text += f"; {escape(self.hint)}"
        return text

    def to_dict(self) -> dict[str, object]:
        return {
            "code": self.code,
            "severity": self.severity.value,
            "message": self.message,
            "hint": self.hint,
            **self.span.to_dict(),
            "related": [{"message": r.message, **r.span.to_dict()} for r in self.related],
        }


def error(code: str, message: str, span: Span, **kw: object) -> Diagnostic:
    return Diagnostic(code, Severity.ERROR, message, span, **kw)  # type: ignore[arg-type]


def warning(code: str, message: str, span: Span, **kw: object) -> Diagnostic:
    return Diagnostic(code, Severity.WARNING, message, span, **kw)  # type: ignore[arg-type]


def sort_diagnostics(diags: Iterable[Diagnostic]) -> list[Diagnostic]:
    unique = {(d.sort_key, d.severity): d for d in diags}
    return sorted(unique.values(), key=lambda d: d.sort_key)


def has_errors(diags: Iterable[Diagnostic]) -> bool:
    return any(d.severity is Severity.ERROR for d in diags)


class RulesError(Exception):
    """A rule set could not be loaded. Carries every diagnostic found, sorted.

    This is the one exception type the Python API raises for bad rules; the CLI
    prints ``diagnostics`` and exits 2.
    """

    def __init__(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.diagnostics = sort_diagnostics(diagnostics)
        errors = [d for d in self.diagnostics if d.severity is Severity.ERROR]
        shown = errors or self.diagnostics
        head = shown[0].line() if shown else "invalid rules"
        more = f" (+{len(shown) - 1} more)" if len(shown) > 1 else ""
        super().__init__(head + more)
