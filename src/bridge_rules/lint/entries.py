"""Walk the compiled name tables: every entry a rule author wrote, with its stage and span.

Checks look at the layered, compiled stages (what the runtime will use), not
the raw files, so overlays and ``enabled: false`` are already applied.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from bridge_rules.compiled import CompiledRules
from bridge_rules.source import Span
from bridge_rules.stages import CompiledStage, PatternStage, TableStage


@dataclass(frozen=True)
class Entry:
    """``key -> wire`` in ``stage``; ``keeps_name`` for pass-through lists."""

    stage: CompiledStage
    table: TableStage
    key: str
    wire: str
    span: Span

    @property
    def renames(self) -> bool:
        return not self.table.keeps_name and self.table.kind != "canonical"


def table_of(stage: CompiledStage) -> TableStage | None:
    if isinstance(stage, TableStage):
        return stage
    if isinstance(stage, PatternStage):
        return stage.table
    return None


def written_entries(
    rules: CompiledRules, *, kinds: frozenset[str] | None = None
) -> Iterator[Entry]:
    """Entries written in rule files (``from_pin`` names, which the pin supplies, are skipped)."""
    for stage in rules.stages:
        if kinds is not None and stage.kind not in kinds:
            continue
        table = table_of(stage)
        if table is None:
            continue
        for key, (wire, span) in table.entries.items():
            if stage.kind == "canonical" and rules.pin_span is not None and span == rules.pin_span:
                continue
            yield Entry(stage, table, key, key if table.keeps_name else wire, span)


def local_spans(rules: CompiledRules) -> dict[str, Span]:
    """Where each known local tool name was written (``local_tools``, then table keys)."""
    spans: dict[str, Span] = {}
    for name, span in rules.local_tools:
        spans.setdefault(name, span)
    for entry in written_entries(rules):
        if entry.stage.kind != "canonical":
            spans.setdefault(entry.key, entry.span)
    return spans
