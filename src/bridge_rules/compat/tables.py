"""What a loaded rule set says, as plain tables: each stage, a pin's canonical names, and
the reverse map of a registered set, for callers that want the data rather than a lookup.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from bridge_rules.engine import Engine, StageTable, canonical_names

__all__ = [
    "ReverseMap",
    "StageTable",
    "canonical_names",
    "lookup",
    "reverse_map",
    "stage",
    "stages",
]


def stages(engine: Engine) -> list[StageTable]:
    """Every name stage, in the order the way out tries them."""
    return engine.stage_tables()


def stage(engine: Engine, stage_id: str) -> StageTable:
    """The stage with this id; ``KeyError`` naming the closest ids when there is none."""
    found = {s.id: s for s in engine.stage_tables()}
    if stage_id not in found:
        close = difflib.get_close_matches(stage_id, list(found), n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise KeyError(f"the rules have no stage '{stage_id}'{hint}")
    return found[stage_id]


@dataclass(frozen=True)
class ReverseMap(Mapping[str, str]):
    """Wire name -> local name for one registered set, as the way back reads it.

    Indexing tries the name as written, then (case-insensitive rules) lowercased, as
    the seed's map holds both spellings; :func:`lookup` also applies the rules' strips.
    """

    engine: Engine
    registered: tuple[str, ...] | None
    exact: Mapping[str, str]
    folded: Mapping[str, str]

    def __getitem__(self, wire: str) -> str:
        found = self.exact.get(wire)
        if found is None:
            found = self.folded.get(wire.lower()) if isinstance(wire, str) else None
        if found is None:
            raise KeyError(wire)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self.exact)

    def __len__(self) -> int:
        return len(self.exact)


def reverse_map(engine: Engine, registered: Iterable[str] | None = None) -> ReverseMap:
    """The reverse map for ``registered`` (None: every local name the rules know)."""
    names = None if registered is None else tuple(registered)
    built = engine.resolver.winners(names)
    return ReverseMap(engine, names, dict(built.exact), dict(built.folded))


def lookup(name: str, rmap: ReverseMap) -> str | None:
    """The local name ``name`` comes back as: the map, then the rules' suffix and prefix
    strips, exactly as a response is rewritten; None when nothing maps it."""
    return rmap.engine.inbound_name(name, rmap.registered)
