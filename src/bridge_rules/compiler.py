"""Layered rule files -> one :class:`CompiledRules`: ordered stages, gate, inbound, bindings.

Every table entry keeps the span it was written at, so the runtime can say
which file and line decided. Whole-pipeline checks (collisions among the names
the rules know) are reported here as diagnostics, never silently accepted.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from bridge_rules.bindings.adapter import Adapter
from bridge_rules.bindings.section import compile_adapters, compile_repair_section
from bridge_rules.compose import RuleSource, SourcedFile
from bridge_rules.diagnostics import Diagnostic, error
from bridge_rules.model import (
    AliasStage,
    BindingsStage,
    CanonicalStage,
    Filters,
    Gate,
    Inbound,
    PassthroughStage,
    PrefixStage,
    Stage,
    Suppression,
    TextRules,
)
from bridge_rules.model_bindings import Binding
from bridge_rules.pins import Pin, PinError, load_pin
from bridge_rules.regexcheck import RegexProblem, compile_safe
from bridge_rules.repair.rules import RepairSet
from bridge_rules.source import Span
from bridge_rules.stages import CompiledStage, PatternStage, TableStage
from bridge_rules.stages import PrefixStage as CompiledPrefix


@dataclass(frozen=True)
class Sourced:
    """A section value and where it was (last) written."""

    value: Any
    span: Span


@dataclass
class _StageDraft:
    """A stage while layering: the model plus the span of every table entry."""

    model: Stage
    id: str
    span: Span
    entry_spans: dict[str, Span]
    file: SourcedFile


@dataclass(frozen=True)
class CompiledGate:
    gate: Gate | None
    span: Span | None
    model_re: re.Pattern[str] | None
    apis: frozenset[str] | None


@dataclass(frozen=True)
class CompiledBinding:
    binding: Binding
    span: Span
    file: SourcedFile
    index: int = 0


@dataclass(frozen=True)
class Strip:
    suffix: str
    case: str
    span: Span


@dataclass
class CompiledRules:
    files: list[SourcedFile]
    stages: list[CompiledStage]
    gate: CompiledGate
    inbound_case: str
    strips: list[Strip]
    bindings: dict[str, CompiledBinding]
    pin: Pin | None
    pin_span: Span | None
    local_pin: Pin | None
    local_tools: list[tuple[str, Span]]
    text: TextRules | None
    filters: Filters | None
    suppressions: list[tuple[Suppression, Span]]
    diagnostics: list[Diagnostic] = field(default_factory=list)
    adapters: dict[str, Adapter] = field(default_factory=dict)
    repairs: RepairSet = field(default_factory=RepairSet)

    @property
    def name(self) -> str:
        for sourced in reversed(self.files):
            if sourced.rules.name:
                return sourced.rules.name
        return self.files[-1].doc.path if self.files else "(empty)"


def _stage_ids(file: SourcedFile) -> list[str]:
    seen: Counter[str] = Counter()
    ids = []
    for stage in file.rules.names or []:
        if stage.id:
            ids.append(stage.id)
            continue
        seen[stage.kind] += 1
        ids.append(stage.kind if seen[stage.kind] == 1 else f"{stage.kind}-{seen[stage.kind]}")
    return ids


def _entry_spans(file: SourcedFile, index: int, stage: Stage) -> dict[str, Span]:
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


def _overlay_stage(base: _StageDraft, new: _StageDraft) -> _StageDraft:
    """Lay a later file's stage over an inherited one with the same id."""
    old, upd = base.model, new.model
    if old.kind != upd.kind:
        return new
    changes = {name: getattr(upd, name) for name in upd.model_fields_set if name != "kind"}
    if isinstance(old, AliasStage) and isinstance(upd, AliasStage):
        changes["map"] = {**old.map, **upd.map}
        changes["inverse"] = {**old.inverse, **upd.inverse}
    elif isinstance(old, (CanonicalStage, PassthroughStage)) and "names" in changes:
        changes["names"] = list(dict.fromkeys([*old.names, *changes["names"]]))
    merged = old.model_copy(update=changes)
    return _StageDraft(
        merged, base.id, base.span, {**base.entry_spans, **new.entry_spans}, base.file
    )


def _layer_stages(files: list[SourcedFile]) -> list[_StageDraft]:
    stages: list[_StageDraft] = []
    for file in files:
        if file.rules.names is None:
            continue
        ids = _stage_ids(file)
        fresh: list[_StageDraft] = []
        for index, (stage, sid) in enumerate(zip(file.rules.names, ids, strict=False)):
            span = file.doc.source_map.key_span(("names", index))
            draft = _StageDraft(stage, sid, span, _entry_spans(file, index, stage), file)
            existing = next((i for i, s in enumerate(stages) if s.id == sid), None)
            if existing is None:
                fresh.append(draft)
            else:
                stages[existing] = _overlay_stage(stages[existing], draft)
        stages = fresh + stages
    return [s for s in stages if s.model.enabled]


def _layer_model(current: Sourced | None, file: SourcedFile, key: str) -> Sourced | None:
    """Field-by-field overlay of a section such as ``gate`` or ``inbound``."""
    value = getattr(file.rules, key)
    if value is None:
        return current
    span = file.doc.source_map.key_span((key,))
    if current is None:
        return Sourced(value, span)
    changes = {name: getattr(value, name) for name in value.model_fields_set}
    return Sourced(current.value.model_copy(update=changes), span)


class _Compiler:
    def __init__(self, source: RuleSource) -> None:
        self.source = source
        self.diags: list[Diagnostic] = list(source.diagnostics)
        self.pin_span: Span | None = None

    def pin(self, attr: str) -> tuple[Pin | None, Span | None]:
        for file in reversed(self.source.files):
            spec = getattr(file.rules, attr)
            if spec is None:
                continue
            span = file.doc.source_map.value_span((attr,))
            try:
                return load_pin(spec), span
            except PinError as exc:
                self.diags.append(error("BR204", str(exc), span))
                return None, span
        return None, None

    def regex(self, pattern: str, span: Span) -> re.Pattern[str] | None:
        try:
            return compile_safe(pattern)
        except RegexProblem as exc:
            self.diags.append(error(exc.code, str(exc), span))
            return None

    def stage(
        self, index: int, draft: _StageDraft, pin: Pin | None, bindings: dict[str, CompiledBinding]
    ) -> CompiledStage | None:
        model = draft.model
        common: dict[str, Any] = {
            "index": index,
            "id": draft.id,
            "kind": model.kind,
            "span": draft.span,
            "description": model.description,
        }
        if isinstance(model, CanonicalStage):
            entries: dict[str, tuple[str, Span]] = {}
            if model.from_pin:
                if pin is None:
                    self.diags.append(
                        error(
                            "BR205",
                            "canonical stage uses 'from_pin' but the rules declare no 'pin'",
                            draft.span,
                            hint="add e.g. 'pin: claude-code@2.1.330'",
                        )
                    )
                else:
                    pin_span = self.pin_span or draft.span
                    entries.update({n: (n, pin_span) for n in pin.tools})
            entries.update({n: (n, draft.entry_spans.get(n, draft.span)) for n in model.names})
            return TableStage(
                **common, case=model.case, reverse=model.reverse, entries=entries
            ).build()
        if isinstance(model, AliasStage):
            entries = {k: (v, draft.entry_spans.get(k, draft.span)) for k, v in model.map.items()}
            inverse = {
                k: (v, draft.entry_spans.get("<inverse>" + k, draft.span))
                for k, v in model.inverse.items()
            }
            return TableStage(
                **common, case=model.case, reverse=model.reverse, entries=entries, inverse=inverse
            ).build()
        if isinstance(model, PassthroughStage):
            table = None
            if model.names:
                entries = {n: (n, draft.entry_spans.get(n, draft.span)) for n in model.names}
                table = TableStage(
                    **common, case=model.case, entries=entries, keeps_name=True
                ).build()
            pattern = None
            if model.pattern is not None:
                pattern = self.regex(model.pattern, draft.span)
            return PatternStage(
                **common,
                case=model.case,
                reverse=model.reverse,
                prefix=model.prefix,
                pattern=pattern,
                table=table,
            )
        if isinstance(model, PrefixStage):
            return CompiledPrefix(
                **common,
                case=model.case,
                reverse=model.reverse,
                value=model.value or "",
                inverse_for=model.inverse_for,
            )
        if isinstance(model, BindingsStage):
            entries = {b.binding.local: (b.binding.wire, b.span) for b in bindings.values()}
            return TableStage(**common, case=model.case, entries=entries).build()
        return None  # pragma: no cover - the union is exhaustive

    def run(self) -> CompiledRules:
        files = self.source.files
        pin, self.pin_span = self.pin("pin")
        local_pin, _ = self.pin("local_pin")

        gate: Sourced | None = None
        inbound: Sourced | None = None
        text: Sourced | None = None
        filters: Sourced | None = None
        bindings: dict[str, CompiledBinding] = {}
        local_tools: dict[str, Span] = {}
        suppressions: list[tuple[Suppression, Span]] = []
        for file in files:
            gate = _layer_model(gate, file, "gate")
            inbound = _layer_model(inbound, file, "inbound")
            text = _layer_model(text, file, "text")
            filters = _layer_model(filters, file, "filters")
            smap = file.doc.source_map
            for index, binding in enumerate(file.rules.bindings or []):
                bindings.pop(binding.local, None)
                bindings[binding.local] = CompiledBinding(
                    binding, smap.key_span(("bindings", index)), file, index
                )
            for index, name in enumerate(file.rules.local_tools):
                local_tools.setdefault(name, smap.key_span(("local_tools", index)))
            for index, sup in enumerate(file.rules.suppress):
                suppressions.append((sup, smap.key_span(("suppress", index))))

        stages: list[CompiledStage] = []
        seen_ids: dict[str, Span] = {}
        for draft in _layer_stages(files):
            if draft.id in seen_ids:  # two stages with one explicit id in a single file
                self.diags.append(
                    error(
                        "BR206",
                        f"stage id '{draft.id}' is used twice",
                        draft.span,
                        hint=f"first used at {seen_ids[draft.id]}",
                    )
                )
                continue
            seen_ids[draft.id] = draft.span
            compiled = self.stage(len(stages), draft, pin, bindings)
            if compiled is not None:
                stages.append(compiled)

        compiled_gate = self.gate(gate)
        inbound_model: Inbound = inbound.value if inbound else Inbound()
        strips = []
        if inbound is not None:
            smap_file = next(f for f in reversed(files) if f.rules.inbound is not None)
            for index, strip in enumerate(inbound_model.suffixes()):
                span = smap_file.doc.source_map.key_span(("inbound", "strip_suffixes", index))
                strips.append(Strip(strip.suffix, strip.case, span))
        if local_pin is not None:
            for name in local_pin.tools:
                local_tools.setdefault(
                    name, Span(f"schemas/{local_pin.product}/{local_pin.version}.json")
                )

        adapters, problems = compile_adapters(
            (b.binding, b.span, b.file.doc.source_map, b.index) for b in bindings.values()
        )
        self.diags.extend(problems)
        return CompiledRules(
            files=files,
            stages=stages,
            gate=compiled_gate,
            inbound_case=inbound_model.case,
            strips=strips,
            bindings=bindings,
            pin=pin,
            pin_span=self.pin_span,
            local_pin=local_pin,
            local_tools=list(local_tools.items()),
            text=text.value if text else None,
            filters=filters.value if filters else None,
            suppressions=suppressions,
            diagnostics=self.diags,
            adapters=adapters,
            repairs=compile_repair_section(files),
        )

    def gate(self, gate: Sourced | None) -> CompiledGate:
        if gate is None:
            return CompiledGate(None, None, None, None)
        model: Gate = gate.value
        model_re = self.regex(model.model, gate.span) if model.model is not None else None
        apis = None
        if model.api is not None:
            apis = frozenset([model.api] if isinstance(model.api, str) else model.api)
        return CompiledGate(model, gate.span, model_re, apis)


def compile_rules(source: RuleSource) -> CompiledRules:
    """Compile loaded rule files. Problems are in ``.diagnostics``; nothing raises."""
    return _Compiler(source).run()
