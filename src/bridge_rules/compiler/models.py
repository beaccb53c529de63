"""``models:`` compiled into a :class:`~bridge_rules.modelrules.ModelTable`.

Each set field of each entry becomes one located setting, in load order, so the table can
layer them at request time (a later file's entry overlays an earlier one field by field).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

from bridge_rules.compose import SourcedFile
from bridge_rules.model import ModelEntry
from bridge_rules.modelrules import ListedModel, ModelTable, Setting, is_exact


def compile_models(files: Iterable[SourcedFile]) -> ModelTable:
    settings: list[Setting] = []
    listed: dict[str, dict[str, Any]] = {}
    for file in files:
        smap = file.doc.source_map
        for glob, entry in (file.rules.models or {}).items():
            for name, value in _fields(entry):
                path = ("models", glob, *name.split("."))
                settings.append(Setting(glob, name, value, smap.value_span(path)))
            if is_exact(glob):
                shown = listed.setdefault(glob, {})
                for key in ("display_name", "created_at", "capabilities"):
                    if getattr(entry, key) is not None:
                        shown[key] = getattr(entry, key)
    return ModelTable(
        tuple(settings),
        tuple(
            ListedModel(
                model,
                shown["display_name"],
                shown.get("created_at", "1970-01-01T00:00:00Z"),
                shown.get("capabilities"),
            )
            for model, shown in listed.items()
            if "display_name" in shown
        ),
    )


def _fields(entry: ModelEntry) -> Iterable[tuple[str, Any]]:
    if entry.tool_choice is not None and entry.tool_choice.forced is not None:
        yield "tool_choice.forced", entry.tool_choice.forced
    if entry.thinking is not None:
        for key in ("foreign", "unknown", "disabled"):
            value = getattr(entry.thinking, key)
            if value is not None:
                yield f"thinking.{key}", value
    if entry.system_in_messages is not None:
        yield "system_in_messages", entry.system_in_messages


@functools.cache
def packaged_models() -> tuple[ModelTable, str | None]:
    """The packaged ``models`` profile compiled (what lint compares globs and overlays
    with), and the path it is shown under; an empty table if it is missing."""
    from bridge_rules.loader import read_file
    from bridge_rules.model import RuleFile
    from bridge_rules.resources import display_root, profile_path

    path = profile_path("models")
    if path is None:
        return ModelTable(), None
    root = display_root()
    shown = str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
    doc, _ = read_file(path, shown)
    if doc is None:
        return ModelTable(), None
    return compile_models([SourcedFile(RuleFile.model_validate(doc.data), doc)]), shown
