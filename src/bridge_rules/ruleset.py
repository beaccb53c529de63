"""Loading a rule set for use: the one path from rule references to a checked Runtime.

Used by the public facade (``bridge_rules.load``), the CLI and the proxy. A rule
set is refused exactly when ``bridge-rules lint`` would report an error for it,
because both go through :func:`bridge_rules.lint.analysis.analyse`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from bridge_rules.diagnostics import RulesError
from bridge_rules.lint.analysis import Analysis, analyse
from bridge_rules.runtime import Runtime

RuleRef = str | os.PathLike[str] | Iterable[str | os.PathLike[str]] | None


def normalise_refs(ref: RuleRef) -> str | Path | list[str | Path] | None:
    """Rule references as the loader takes them; a clear TypeError for anything else."""
    if ref is None or isinstance(ref, str):
        return ref
    if isinstance(ref, os.PathLike):
        return Path(ref)
    if isinstance(ref, (bytes, bytearray)) or not isinstance(ref, Iterable):
        raise TypeError(
            f"rules must be a profile name, a path, or a list of them, not {type(ref).__name__}"
        )
    out: list[str | Path] = []
    for item in ref:
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, os.PathLike):
            out.append(Path(item))
        else:
            raise TypeError(
                f"each rule reference must be a str or a path, not {type(item).__name__}"
            )
    return out


def load_analysis(rules: RuleRef = None) -> Analysis:
    """The checked rule set; raises :class:`RulesError` with every problem if any is an error."""
    analysis = analyse(normalise_refs(rules))
    if analysis.runtime is None or analysis.has_errors:
        raise RulesError(analysis.diagnostics)
    return analysis


def load_runtime(rules: RuleRef = None) -> Runtime:
    """The compiled runtime of a rule set that has no errors (see :func:`load_analysis`)."""
    runtime = load_analysis(rules).runtime
    assert runtime is not None
    return runtime
