"""The sections besides ``names:`` compiled: the gate, inbound strips and prefixes, wire
names, schemas, bindings, local tools, suppressions.

Each is layered field by field (:mod:`~bridge_rules.compiler.layering`) and located at the
file whose setting won, so a problem names the line that decided it.
"""

from __future__ import annotations

import dataclasses

from bridge_rules.compiled import CompiledBinding
from bridge_rules.compiler.layering import Sourced, last_file_setting, layer_section
from bridge_rules.compiler.stage_compile import StageCompiler
from bridge_rules.gate import CompiledGate
from bridge_rules.model import (
    Gate,
    Inbound,
    SchemaRules,
    Suppression,
    WireNames,
)
from bridge_rules.model import PrefixStrip as PrefixStripModel
from bridge_rules.pins import Pin
from bridge_rules.schemas import DEFAULT_TARGET, Profile, profile
from bridge_rules.source import Span
from bridge_rules.stages import (
    CompiledStage,
    Gateway,
    NameGuard,
    PrefixStrip,
    Strip,
)


class SectionCompiler(StageCompiler):
    """Every section's compiled form, over the stage compiler's files and diagnostics."""

    def gate(self) -> CompiledGate:
        layered = layer_section(self.files, "gate")
        if layered is None:
            return CompiledGate()
        model: Gate = layered.value
        model_re = None
        if model.model is not None:
            file = last_file_setting(self.files, "gate", "model") or layered.file
            model_re = self.pattern(model.model, file.doc.source_map.value_span(("gate", "model")))
        apis = None
        if model.api is not None:
            apis = frozenset([model.api] if isinstance(model.api, str) else model.api)
        span = layered.file.doc.source_map.key_span(("gate",))
        return CompiledGate(gate=model, span=span, model_re=model_re, apis=apis)

    def strips(self, inbound: Sourced | None) -> list[Strip]:
        if inbound is None:
            return []
        model: Inbound = inbound.value
        file = last_file_setting(self.files, "inbound", "strip_suffixes") or inbound.file
        smap = file.doc.source_map
        return [
            Strip(s.suffix, s.case, smap.key_span(("inbound", "strip_suffixes", i)))
            for i, s in enumerate(model.suffixes())
        ]

    def prefix_strip(self, model: PrefixStripModel, span: Span) -> PrefixStrip | None:
        """The compiled strip; None for a pattern that does not compile (reported)."""
        if model.pattern is None:
            return PrefixStrip(model.prefix or "", model.case, span)
        pattern = self.pattern(model.pattern, span)
        return None if pattern is None else PrefixStrip("", model.case, span, pattern)

    def gateway(self, inbound: Sourced | None, stages: list[CompiledStage]) -> Gateway:
        if inbound is None:
            return Gateway()
        model: Inbound = inbound.value
        file = last_file_setting(self.files, "inbound", "strip_prefixes") or inbound.file
        smap = file.doc.source_map
        compiled = (
            self.prefix_strip(s, smap.key_span(("inbound", "strip_prefixes", i)))
            for i, s in enumerate(model.prefixes())
        )
        prefixes = tuple(strip for strip in compiled if strip is not None)
        doubled: dict[str, Span] = {}
        if model.collapse_doubled_prefixes:
            for stage in stages:
                value = getattr(stage, "value", None) or getattr(stage, "prefix", None)
                if isinstance(value, str) and value:
                    doubled.setdefault(value, stage.span)
            for strip in prefixes:
                if strip.pattern is None:
                    doubled.setdefault(strip.prefix, strip.span)
        setting = last_file_setting(self.files, "inbound", "match_registered") or inbound.file
        return Gateway(
            prefixes=prefixes,
            doubled=tuple(doubled.items()),
            match_registered=model.match_registered,
            span=setting.doc.source_map.key_span(("inbound", "match_registered")),
        )

    def wire_names(self, target: str | None) -> NameGuard:
        layered = layer_section(self.files, "wire_names")
        if layered is None:
            return NameGuard(target=target)
        model: WireNames = layered.value
        return NameGuard(
            max_length=model.max_length,
            on_invalid=model.on_invalid,
            on_collision=model.on_collision,
            span=layered.file.doc.source_map.key_span(("wire_names",)),
            target=target,
        )

    def schemas(self) -> tuple[Profile, Span | None]:
        """``schemas:`` layered field by field: a later file can change the target alone."""
        layered = layer_section(self.files, "schemas")
        if layered is None:
            return profile(DEFAULT_TARGET), None
        model: SchemaRules = layered.value
        target: str | None = model.target
        if target is None:
            target = None if model.operations else DEFAULT_TARGET
        chosen = profile(None if target == "none" else target, tuple(model.operations))
        span = layered.file.doc.source_map.key_span(("schemas",))
        return dataclasses.replace(chosen, ref_depth=model.ref_depth), span

    def bindings(self) -> dict[str, CompiledBinding]:
        out: dict[str, CompiledBinding] = {}
        for file in self.files:
            smap = file.doc.source_map
            for index, binding in enumerate(file.rules.bindings or []):
                out.pop(binding.local, None)  # a later binding replaces, and moves to the end
                out[binding.local] = CompiledBinding(
                    binding, smap.key_span(("bindings", index)), file, index
                )
        return out

    def local_tools(self, local_pin: Pin | None) -> dict[str, Span]:
        out: dict[str, Span] = {}
        for file in self.files:
            for index, name in enumerate(file.rules.local_tools):
                out.setdefault(name, file.doc.source_map.key_span(("local_tools", index)))
        if local_pin is not None:
            where = Span(local_pin.location)
            for name in local_pin.tools:
                out.setdefault(name, where)
        return out

    def suppressions(self) -> list[tuple[Suppression, Span]]:
        return [
            (sup, file.doc.source_map.key_span(("suppress", index)))
            for file in self.files
            for index, sup in enumerate(file.rules.suppress)
        ]

    def text_span(self, index: int, key: str) -> Span:
        file = last_file_setting(self.files, "text", "system") or self.files[-1]
        return file.doc.source_map.value_span(("text", "system", index, key))
