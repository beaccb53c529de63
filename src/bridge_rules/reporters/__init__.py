"""Reporters: plug-ins that write one list of diagnostics to a stream they are given.

Every format sees the same data (the diagnostics, sorted, and a :class:`Summary`);
a reporter never decides an exit code and never reads anything else, so adding
a format is adding a module and a line in :data:`REPORTERS`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TextIO

from bridge_rules.diagnostics import Diagnostic


@dataclass(frozen=True)
class Summary:
    rule_sets: int
    errors: int
    warnings: int
    infos: int
    suppressed: int

    def to_dict(self) -> dict[str, int]:
        return {
            "rule_sets": self.rule_sets,
            "errors": self.errors,
            "warnings": self.warnings,
            "infos": self.infos,
            "suppressed": self.suppressed,
        }


Reporter = Callable[[Sequence[Diagnostic], Summary, TextIO], None]

# format name -> module under bridge_rules.reporters defining ``report``.
REPORTERS = {"text": "text", "json": "json_report", "github": "github", "sarif": "sarif"}


def get(name: str) -> Reporter:
    """The reporter for a format name; ``KeyError`` for an unknown one."""
    module = importlib.import_module(f"bridge_rules.reporters.{REPORTERS[name]}")
    report: Reporter = module.report
    return report
