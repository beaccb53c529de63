"""``bridge-rules lint`` over several targets: one :class:`Analysis` each, one report.

Each target (a file, a directory, or a packaged profile name) is checked as its
own rule set together with what it ``extends``, by the same function that
``bridge_rules.load()`` uses (:func:`bridge_rules.lint.analysis.analyse`).
Every problem of a run is collected as data; nothing here prints or exits (the
CLI decides exit codes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bridge_rules.diagnostics import Diagnostic, Severity, sort_diagnostics
from bridge_rules.lint.analysis import Analysis, analyse
from bridge_rules.pins import Pin
from bridge_rules.resources import profile_names


@dataclass
class LintReport:
    targets: list[Analysis]
    refused: list[Diagnostic] = field(default_factory=list)
    """Files discovery would not hand to the loader (a symlink out of the project)."""
    across: list[Diagnostic] = field(default_factory=list)
    """Findings about several rule sets at once: the routes of a ``serve --config`` file
    (BR322, ``lint --config``)."""

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """Every finding of the run, deduplicated (profiles share files) and sorted."""
        every = (d for t in self.targets for d in t.diagnostics)
        return sort_diagnostics([*self.refused, *self.across, *every])

    @property
    def suppressed(self) -> int:
        return len(sort_diagnostics(d for t in self.targets for d in t.suppressed))

    @property
    def unloadable(self) -> bool:
        return bool(self.refused) or any(t.unloadable for t in self.targets)

    def count(self, severity: Severity) -> int:
        return sum(1 for d in self.diagnostics if d.severity is severity)


def default_targets() -> list[str]:
    """With no PATH: the packaged default rules and every packaged profile."""
    return profile_names()


def lint_target(target: str | Path, pin: Pin | None = None) -> Analysis:
    """Lint one rule set: loader, validation and compiler diagnostics, then every check."""
    return analyse(target, pin)


def lint(
    targets: Sequence[str | Path | Sequence[str | Path]] | None = None,
    pin: Pin | None = None,
    refused: Sequence[Diagnostic] = (),
    schema_targets: tuple[str, ...] = (),
) -> LintReport:
    """Each target on its own; a target that is a list is one layered rule set. ``None``
    lints the packaged profiles; an empty list lints nothing (what ``refused`` lists was
    all there was). ``schema_targets``: APIs the pinned tools' schemas are checked against
    (``--target``)."""
    chosen = list(targets) if targets is not None else list(default_targets())
    return LintReport([analyse(t, pin, schema_targets) for t in chosen], list(refused))
