"""The ``names:`` stages compiled: each layered stage into its table or pattern stage.

The base of the compiler: it holds the files and the diagnostics every section adds to, and
compiles the pins and patterns stages and sections both use.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bridge_rules.compiled import CompiledBinding
from bridge_rules.compiler.layering import StageDraft, layer_stages
from bridge_rules.compose import RuleSource
from bridge_rules.diagnostics import Diagnostic, error
from bridge_rules.model import (
    AliasStage,
    BindingsStage,
    CanonicalStage,
    PassthroughStage,
    PrefixStage,
)
from bridge_rules.patterns import Pattern, PatternError, compile_pattern
from bridge_rules.pins import Pin, PinError, load_pin
from bridge_rules.source import Span
from bridge_rules.stages import (
    CompiledStage,
    PatternStage,
    TableStage,
)
from bridge_rules.stages import PrefixStage as CompiledPrefix


class StageCompiler:
    """Layered files in, compiled stages out; problems collected, never raised."""

    def __init__(self, source: RuleSource) -> None:
        self.files = tuple(source.files)
        self.diags: list[Diagnostic] = list(source.diagnostics)
        self.pin_span: Span | None = None
        self.pin_failed = False  # a declared pin that BR204 reported: no BR205 on top of it

    def pin(self, attr: str) -> tuple[Pin | None, Span | None]:
        for file in reversed(self.files):
            spec = getattr(file.rules, attr)
            if spec is None:
                continue
            span = file.doc.source_map.value_span((attr,))
            try:
                return load_pin(spec), span
            except PinError as exc:
                self.diags.append(error("BR204", str(exc), span, hint=exc.hint))
                self.pin_failed = self.pin_failed or attr == "pin"
                return None, span
        return None, None

    def pattern(self, text: str, span: Span) -> Pattern | None:
        try:
            return compile_pattern(text)
        except PatternError as exc:
            self.diags.append(error(exc.code, str(exc), span))
            return None

    # --------------------------------------------------------- stages

    def stages(
        self, pin: Pin | None, bindings: Mapping[str, CompiledBinding]
    ) -> list[CompiledStage]:
        stages: list[CompiledStage] = []
        seen: dict[str, Span] = {}
        for draft in layer_stages(self.files):
            if draft.id in seen:  # two stages with one explicit id in a single file
                hint = f"first used at {seen[draft.id]}"
                self.diags.append(
                    error("BR206", f"stage id '{draft.id}' is used twice", draft.span, hint=hint)
                )
                continue
            seen[draft.id] = draft.span
            stages.append(self.stage(len(stages), draft, pin, bindings))
        return stages

    def stage(
        self,
        index: int,
        draft: StageDraft,
        pin: Pin | None,
        bindings: Mapping[str, CompiledBinding],
    ) -> CompiledStage:
        model = draft.model
        common: dict[str, Any] = {
            "index": index,
            "id": draft.id,
            "kind": model.kind,
            "span": draft.span,
            "description": model.description,
        }
        if isinstance(model, CanonicalStage):
            return self.canonical(common, draft, model, pin)
        if isinstance(model, AliasStage):
            return self.aliases(common, draft, model)
        if isinstance(model, PassthroughStage):
            return self.passthrough(common, draft, model)
        if isinstance(model, PrefixStage):
            return CompiledPrefix(
                **common,
                case=model.case,
                reverse=model.reverse,
                value=model.value or "",
                inverse_for=model.inverse_for,
            )
        assert isinstance(model, BindingsStage)
        entries = {b.binding.local: (b.binding.wire, b.span) for b in bindings.values()}
        return TableStage(**common, case=model.case, entries=entries).build()

    def canonical(
        self, common: dict[str, Any], draft: StageDraft, model: CanonicalStage, pin: Pin | None
    ) -> TableStage:
        entries: dict[str, tuple[str, Span]] = {}
        declared: dict[str, str] = {}
        if model.from_pin:
            if pin is None and not self.pin_failed:
                self.diags.append(
                    error(
                        "BR205",
                        "canonical stage uses 'from_pin' but the rules declare no 'pin'",
                        draft.span,
                        hint="add e.g. 'pin: claude-code@2.1.330'",
                    )
                )
            elif pin is not None:
                pin_span = self.pin_span or draft.span
                names = pin.canonical_names(model.include_declared)
                entries.update({n: (n, pin_span) for n in names})
                if not model.include_declared:
                    declared = dict.fromkeys(sorted(pin.declared_only), pin.spec)
        where = draft.span
        entries.update({n: (n, draft.entry_spans.get(n, where)) for n in model.names})
        stage = TableStage(**common, case=model.case, reverse=model.reverse, entries=entries)
        stage.declared_only = {n: p for n, p in declared.items() if n not in entries}
        return stage.build()

    def aliases(self, common: dict[str, Any], draft: StageDraft, model: AliasStage) -> TableStage:
        spans, where = draft.entry_spans, draft.span  # `span` is a lookup: once, not per entry
        entries = {k: (v, spans.get(k, where)) for k, v in model.map.items()}
        inverse = {k: (v, spans.get("<inverse>" + k, where)) for k, v in model.inverse.items()}
        return TableStage(
            **common, case=model.case, reverse=model.reverse, entries=entries, inverse=inverse
        ).build()

    def passthrough(
        self, common: dict[str, Any], draft: StageDraft, model: PassthroughStage
    ) -> PatternStage:
        table = None
        if model.names:
            where = draft.span
            entries = {n: (n, draft.entry_spans.get(n, where)) for n in model.names}
            table = TableStage(**common, case=model.case, entries=entries, keeps_name=True).build()
        pattern = None
        if model.pattern is not None:
            span = draft.file.doc.source_map.value_span((*draft.path, "pattern"))
            pattern = self.pattern(model.pattern, span)
        return PatternStage(
            **common,
            case=model.case,
            reverse=model.reverse,
            prefix=model.prefix,
            pattern=pattern,
            table=table,
        )
