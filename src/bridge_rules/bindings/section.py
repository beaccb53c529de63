"""Compile the ``bindings`` and ``repair`` sections of layered rule files (a compiler step)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from bridge_rules.bindings.adapter import Adapter, compile_binding
from bridge_rules.diagnostics import Diagnostic
from bridge_rules.model_bindings import Binding, Repair
from bridge_rules.repair.rules import RepairSet, SpanOf, compile_repairs
from bridge_rules.source import SourceMap, Span

if TYPE_CHECKING:
    from bridge_rules.compose import SourcedFile


def _span_of(smap: SourceMap, base: tuple[str | int, ...]) -> SpanOf:
    return lambda path: smap.key_span((*base, *path))


def compile_adapters(
    bindings: Iterable[tuple[Binding, Span, SourceMap, int]],
) -> tuple[dict[str, Adapter], list[Diagnostic]]:
    """One adapter per local tool (the binding that won the layering)."""
    adapters: dict[str, Adapter] = {}
    diags: list[Diagnostic] = []
    for binding, span, smap, index in bindings:
        adapter, problems = compile_binding(binding, span, _span_of(smap, ("bindings", index)))
        adapters[binding.local] = adapter
        diags.extend(problems)
    return adapters, diags


def compile_repair_section(files: Iterable[SourcedFile]) -> RepairSet:
    entries: list[tuple[Repair, SpanOf]] = []
    for file in files:
        smap = file.doc.source_map
        for index, entry in enumerate(file.rules.repair or []):
            entries.append((entry, _span_of(smap, ("repair", index))))
    return compile_repairs(entries)
