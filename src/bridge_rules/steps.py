"""The compiled-operation types shared by argument bindings and argument repair.

Both packages compile rule entries into :class:`Step` objects that run over a
working copy of a call's arguments; ``explain --args`` shows them side by side.
They live here, below both packages, so neither imports the other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bridge_rules.source import SourceMap, Span

Fn = Callable[[dict[str, Any]], None]
"""An operation: mutates the working dict it is given (a copy the caller owns)."""

SpanOf = Callable[[tuple[str | int, ...]], Span]
"""Locates a path inside one rule entry (``span_of(("input", 2))``)."""


@dataclass(frozen=True, kw_only=True)
class Step:
    """One compiled operation with where it was written."""

    kind: str
    text: str
    span: Span
    run: Fn
    exact: bool
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    needs: frozenset[str] | None = None
    """Top-level keys without any of which ``run`` changes nothing (None: not declared)."""

    def to_dict(self) -> dict[str, Any]:
        return {"op": self.kind, "text": self.text, **self.span.to_dict()}


def run_steps(steps: tuple[Step, ...], arguments: Any) -> Any:
    """The arguments after every step (a new dict), or as they were when not an object."""
    if not isinstance(arguments, dict) or not steps:
        return arguments
    work = dict(arguments)
    for step in steps:
        step.run(work)
    return work


def entry_spans(smap: SourceMap, base: tuple[str | int, ...]) -> SpanOf:
    """Locate paths inside the rule entry at ``base`` of a file (e.g. ``("bindings", 3)``)."""
    return lambda path: smap.key_span((*base, *path))
