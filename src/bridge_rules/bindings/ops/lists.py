"""``merge`` and ``split``: several fields <-> one list whose items carry a prefix per source.

Each is the other's inverse. Both lose only item order (a split gives each source its
items back, but a merge puts them in source order), so lint asks for ``losses:``.
"""

from __future__ import annotations

from typing import Any

from bridge_rules import model_bindings as mb
from bridge_rules.bindings.ops.base import Compiled, CompileNested, Operation
from bridge_rules.bindings.paths import MISSING
from bridge_rules.steps import Fn


class _Sorter:
    """How a split assigns a merged item to a source: the longest matching prefix wins, an
    item without one goes to the source without a prefix (if any). A merge writes only items
    this reads back to the same source and value, so the encoding is unambiguous."""

    def __init__(self, sources: list[mb.Source]) -> None:
        self.prefixed = sorted((s for s in sources if s.prefix), key=lambda s: -len(s.prefix))
        self.plain = next((s for s in sources if not s.prefix), None)

    def sort(self, item: Any) -> tuple[mb.Source | None, Any]:
        if isinstance(item, str):
            for src in self.prefixed:
                if item.startswith(src.prefix):
                    return src, item[len(src.prefix) :]
        return self.plain, item


def _merged(sorter: _Sorter, src: mb.Source, value: Any) -> list[Any] | None:
    """One source's items with its prefix, or None when one would read back differently
    (an allowed domain starting with '-', a blocked item that is not a string)."""
    out = []
    for item in value if isinstance(value, list) else [value]:
        merged = src.prefix + item if isinstance(item, str) else item
        back, rest = sorter.sort(merged)
        if back is not src or rest != item or type(rest) is not type(item):
            return None
        out.append(merged)
    return out


def _merge_fn(into: str, sources: list[mb.Source]) -> Fn:
    sorter = _Sorter(sources)
    fields = [s.field for s in sources]

    def run(work: dict[str, Any]) -> None:
        present = [s for s in sources if s.field in work]
        if not present:
            return
        every = len(present) == len(sources) and into not in work
        if every and all(work[f] == [] for f in fields):  # every list given, all empty: one []
            for f in fields:
                del work[f]
            work[into] = []
            return
        items: list[Any] = []
        used = []
        for src in present:
            value = work[src.field]
            if value == []:
                continue  # an empty list stays as sent, so it replays as sent
            merged = _merged(sorter, src, value)
            if merged is None:
                return  # ambiguous: every source stays as sent
            items.extend(merged)
            used.append(src.field)
        if not used:
            return
        for f in used:
            del work[f]
        existing = work.get(into, MISSING)
        if isinstance(existing, list):
            items = [*existing, *items]
        elif existing is not MISSING:
            items = [existing, *items]
        work[into] = items

    return run


def _split_fn(source: str, targets: list[mb.Source]) -> Fn:
    sorter = _Sorter(targets)

    def run(work: dict[str, Any]) -> None:
        value = work.get(source, MISSING)
        if not isinstance(value, list):
            return
        if not value:  # the one encoding of "every list given, all empty"
            del work[source]
            for t in targets:
                work.setdefault(t.field, [])
            return
        out: dict[str, list[Any]] = {}
        rest: list[Any] = []
        for item in value:
            hit, bare = sorter.sort(item)
            if hit is None:
                rest.append(bare)
            else:
                out.setdefault(hit.field, []).append(bare)
        if rest:
            work[source] = rest
        else:
            del work[source]
        for field, items in out.items():
            existing = work.get(field)
            work[field] = [*existing, *items] if isinstance(existing, list) else items

    return run


def _describe_sources(sources: list[mb.Source]) -> str:
    return ", ".join(
        f"{s.field}" + (f" (prefix '{s.prefix}')" if s.prefix else "") for s in sources
    )


class Merge(Operation[mb.MergeSpec]):
    model = mb.MergeOp
    loses = True

    @classmethod
    def compile(cls, spec: mb.MergeSpec, nested: CompileNested) -> Compiled:
        sources = [mb.source_of(s) for s in spec.from_]
        why = None
        if sum(1 for s in sources if not s.prefix) > 1:
            why = "more than one source has no prefix, so a split cannot tell them apart"
        elif len({s.prefix for s in sources}) != len(sources):
            why = "two sources share a prefix"
        return Compiled(
            forward=_merge_fn(spec.into, sources),
            inverse=None if why else _split_fn(spec.into, sources),
            why_not=why,
            exact=False,
            text=f"merge {_describe_sources(sources)} -> {spec.into}",
            reads=tuple(s.field for s in sources),
            writes=(spec.into,),
        )


class Split(Operation[mb.SplitSpec]):
    model = mb.SplitOp
    loses = True

    @classmethod
    def compile(cls, spec: mb.SplitSpec, nested: CompileNested) -> Compiled:
        targets = [mb.source_of(s) for s in spec.into]
        return Compiled(
            forward=_split_fn(spec.from_, targets),
            inverse=_merge_fn(spec.from_, targets),
            exact=False,
            text=f"split {spec.from_} -> {_describe_sources(targets)}",
            reads=(spec.from_,),
            writes=tuple(t.field for t in targets),
        )
