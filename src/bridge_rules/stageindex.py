"""The first stage that decides a name, found without asking every stage in turn.

The resolver's rule is simple: stages are tried in order and the first match
decides. Asked literally, that costs one ``match`` per stage, so a rule set of
thousands of stages makes every lookup (and every lint pass over every entry)
quadratic. Table entries are therefore indexed once: name -> the first table
that has it, lowercased name -> the first case-insensitive table that has it.
Only the stages that decide by prefix or pattern are still tried one by one,
and only those before the first table that has the name.
"""

from __future__ import annotations

from collections.abc import Sequence

from bridge_rules.stages import CompiledStage, Hit, PatternStage, TableStage

# Up to this many stages, trying each in turn is cheaper than the index lookups.
_SCAN = 8


class StageIndex:
    """``first(name)``: the position and hit of the first stage that matches ``name``."""

    def __init__(self, stages: Sequence[CompiledStage]) -> None:
        self.stages = tuple(stages)
        self._exact: dict[str, int] = {}
        self._folded: dict[str, int] = {}
        self._tried: list[int] = []  # stages that decide by prefix or pattern
        for pos, stage in enumerate(self.stages):
            table = stage if isinstance(stage, TableStage) else None
            if isinstance(stage, PatternStage):
                table = stage.table
            if table is not None:
                for key in table.entries:
                    self._exact.setdefault(key, pos)
                if table.case == "insensitive":
                    for low in table.folded:
                        self._folded.setdefault(low, pos)
            if not isinstance(stage, TableStage):
                self._tried.append(pos)

    def first(self, name: str, before: int | None = None) -> tuple[int, Hit] | None:
        """The first of the stages before position ``before`` (default: all) matching ``name``."""
        limit = len(self.stages) if before is None else before
        if limit <= _SCAN:
            return self._scan(name, limit)
        best = self._exact.get(name, limit)
        if self._folded:
            best = min(best, self._folded.get(name.lower(), limit))
        for pos in self._tried:
            if pos >= best:
                break
            hit = self.stages[pos].match(name)
            if hit is not None:
                return pos, hit
        if best < limit:
            hit = self.stages[best].match(name)
            if hit is not None:  # always, by construction of the index
                return best, hit
        return None

    def _scan(self, name: str, limit: int) -> tuple[int, Hit] | None:
        for pos in range(limit):
            hit = self.stages[pos].match(name)
            if hit is not None:
                return pos, hit
        return None
