"""Compile the ``bindings`` section of layered rule files (a compiler step)."""

from __future__ import annotations

from collections.abc import Iterable

from bridge_rules.bindings.adapter import Adapter, compile_binding
from bridge_rules.diagnostics import Diagnostic
from bridge_rules.model_bindings import Binding
from bridge_rules.source import SourceMap, Span
from bridge_rules.steps import entry_spans


def compile_adapters(
    bindings: Iterable[tuple[Binding, Span, SourceMap, int]],
) -> tuple[dict[str, Adapter], list[Diagnostic]]:
    """One adapter per local tool (the binding that won the layering)."""
    adapters: dict[str, Adapter] = {}
    diags: list[Diagnostic] = []
    for binding, span, smap, index in bindings:
        adapter, problems = compile_binding(binding, span, entry_spans(smap, ("bindings", index)))
        adapters[binding.local] = adapter
        diags.extend(problems)
    return adapters, diags
