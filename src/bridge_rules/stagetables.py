"""What a compiled rule set says, as plain tables: each name stage and a pin's canonical
names, for callers that want the data rather than a lookup (``bridge_rules.compat``). The
engine's facade offers them (:meth:`Engine.stage_tables
<bridge_rules.engine.Engine.stage_tables>`, :func:`bridge_rules.engine.canonical_names`),
so that nothing above it reads the compiled stages' classes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from bridge_rules.pins import Pin, load_pin
from bridge_rules.stages import CompiledStage, PatternStage, PrefixStage, TableStage


@dataclass(frozen=True)
class StageTable:
    """One name stage of a rule set: its table (local -> wire; a canonical or passthrough
    name maps to itself) and, for a prefix stage or a passthrough by prefix, the prefix."""

    id: str
    kind: str
    case: str
    reverse: str
    table: Mapping[str, str]
    prefix: str | None = None


def _table(stage: TableStage) -> dict[str, str]:
    return {key: key if stage.keeps_name else wire for key, (wire, _span) in stage.entries.items()}


def describe(stage: CompiledStage) -> StageTable:
    table: dict[str, str] = {}
    prefix: str | None = None
    if isinstance(stage, TableStage):
        table = _table(stage)
    elif isinstance(stage, PatternStage):
        table = _table(stage.table) if stage.table is not None else {}
        prefix = stage.prefix
    elif isinstance(stage, PrefixStage):
        prefix = stage.value
    return StageTable(stage.id, stage.kind, stage.case, stage.reverse, table, prefix)


def canonical_names(pin: str | Pin, include_declared: bool = False) -> list[str]:
    """The tool names of a pin (``claude-code@2.1.330``) that are canonical: those the binary
    sends; with ``include_declared``, also those only its type declarations list."""
    found = load_pin(pin) if isinstance(pin, str) else pin
    return found.canonical_names(include_declared)
