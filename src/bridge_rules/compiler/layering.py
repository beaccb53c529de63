"""Layering rule files: stages by id and sections field by field, each entry keeping its span.

A later file lays its stages over the inherited ones with the same id and its sections'
fields over theirs; what comes out still says which file wrote each entry, so the compiler
can locate every problem where it was written.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from bridge_rules.compose import SourcedFile
from bridge_rules.model import (
    AliasStage,
    CanonicalStage,
    PassthroughStage,
    Stage,
)
from bridge_rules.source import DocPath, Span


@dataclass(frozen=True)
class Sourced:
    """A section value and the file that (last) wrote it."""

    value: Any
    file: SourcedFile


@dataclass(frozen=True, kw_only=True)
class StageDraft:
    """A stage while layering: the model, its place in its file, every entry's span."""

    model: Stage
    id: str
    path: DocPath
    entry_spans: dict[str, Span]
    file: SourcedFile

    @property
    def span(self) -> Span:
        return self.file.doc.source_map.key_span(self.path)


# ------------------------------------------------------------ layering
def stage_ids(file: SourcedFile) -> list[str]:
    seen: Counter[str] = Counter()
    ids = []
    for stage in file.rules.names or []:
        if stage.id:
            ids.append(stage.id)
            continue
        seen[stage.kind] += 1
        ids.append(stage.kind if seen[stage.kind] == 1 else f"{stage.kind}-{seen[stage.kind]}")
    return ids


def entry_spans(file: SourcedFile, index: int, stage: Stage) -> dict[str, Span]:
    smap = file.doc.source_map
    spans: dict[str, Span] = {}
    if isinstance(stage, AliasStage):
        for key in stage.map:
            spans[key] = smap.key_span(("names", index, "map", key))
        for key in stage.inverse:
            spans["<inverse>" + key] = smap.key_span(("names", index, "inverse", key))
    elif isinstance(stage, (CanonicalStage, PassthroughStage)):
        for pos, name in enumerate(stage.names):
            spans[name] = smap.key_span(("names", index, "names", pos))
    return spans


def overlay_stage(base: StageDraft, later: list[StageDraft]) -> StageDraft:
    """Lay each later file's stage with the same id over an inherited one, in order.

    One pass over all of them: each table is copied once, not once per file (10,000 files
    adding to one alias table made that quadratic). A stage of another kind replaces what
    came before it, and the overlays after it are laid over it instead."""
    start, kind = -1, base.model.kind
    for at, draft in enumerate(later):
        if draft.model.kind != kind:
            start, kind = at, draft.model.kind
    if start >= 0:
        base, later = later[start], later[start + 1 :]
    if not later:
        return base
    old = base.model
    changes: dict[str, Any] = {}
    spans = dict(base.entry_spans)
    table, inverse = dict(getattr(old, "map", {})), dict(getattr(old, "inverse", {}))
    names = dict.fromkeys(getattr(old, "names", ()))
    for draft in later:
        upd = draft.model
        changes.update({f: getattr(upd, f) for f in upd.model_fields_set if f != "kind"})
        if isinstance(upd, AliasStage):
            table.update(upd.map)
            inverse.update(upd.inverse)
        elif (
            isinstance(upd, (CanonicalStage, PassthroughStage)) and "names" in upd.model_fields_set
        ):
            names.update(dict.fromkeys(upd.names))
        spans.update(draft.entry_spans)
    if isinstance(old, AliasStage):
        changes["map"], changes["inverse"] = table, inverse
    elif isinstance(old, (CanonicalStage, PassthroughStage)) and "names" in changes:
        changes["names"] = list(names)
    return StageDraft(
        model=old.model_copy(update=changes),
        id=base.id,
        path=base.path,
        entry_spans=spans,
        file=base.file,
    )


def layer_stages(files: tuple[SourcedFile, ...]) -> list[StageDraft]:
    """Every file's stages in layering order: a new id goes before the inherited stages, a
    known one is laid over the stage that holds it (:func:`overlay_stage`, once at the end)."""
    slots: list[tuple[StageDraft, list[StageDraft]]] = []
    position: dict[str, int] = {}
    for file in files:
        if file.rules.names is None:
            continue
        fresh: list[tuple[StageDraft, list[StageDraft]]] = []
        for index, (stage, sid) in enumerate(zip(file.rules.names, stage_ids(file), strict=True)):
            draft = StageDraft(
                model=stage,
                id=sid,
                path=("names", index),
                entry_spans=entry_spans(file, index, stage),
                file=file,
            )
            existing = position.get(sid)
            if existing is None:
                fresh.append((draft, []))
            else:
                slots[existing][1].append(draft)
        if fresh:
            slots = fresh + slots
            position = {s.id: i for i, (s, _) in enumerate(slots)}
    stages = [overlay_stage(base, later) for base, later in slots]
    return [s for s in stages if s.model.enabled]


def layer_section(files: tuple[SourcedFile, ...], key: str) -> Sourced | None:
    """Field-by-field overlay of a section such as ``gate`` or ``inbound``."""
    current: Sourced | None = None
    for file in files:
        value = getattr(file.rules, key)
        if value is None:
            continue
        if current is not None:
            changes = {name: getattr(value, name) for name in value.model_fields_set}
            value = current.value.model_copy(update=changes)
        current = Sourced(value, file)
    return current


def last_file_setting(
    files: tuple[SourcedFile, ...], section: str, field: str
) -> SourcedFile | None:
    """The file whose ``section.field`` won the layering (where to locate its problems)."""
    for file in reversed(files):
        value = getattr(file.rules, section)
        if value is not None and field in value.model_fields_set:
            return file
    return None
