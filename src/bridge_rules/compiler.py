"""Layered rule files -> one :class:`~bridge_rules.runtime.Runtime`.

Each step is a small function: pins, layered sections, ordered stages, the
gate, inbound strips, binding adapters, repairs, the text/filter plan, and at
the end everything the request path needs, precomputed (effective adapters and
the history plan of every known local name). Every table entry keeps the span
it was written at, so the runtime can say which file and line decided.

Nothing here raises for bad rules: problems are diagnostics on
``runtime.rules.diagnostics``, and the runtime is still built from what did
compile, so lint can report everything in one run. ``bridge_rules.ruleset``
decides whether a rule set with problems may be used.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bridge_rules.bindings.adapter import Adapter
from bridge_rules.bindings.section import compile_adapters
from bridge_rules.compiled import CompiledBinding, CompiledRules
from bridge_rules.compose import RuleSource, SourcedFile
from bridge_rules.diagnostics import Diagnostic, error
from bridge_rules.gate import CompiledGate
from bridge_rules.model import (
    AliasStage,
    BindingsStage,
    CanonicalStage,
    Gate,
    Inbound,
    PassthroughStage,
    PrefixStage,
    SchemaRules,
    Stage,
    Suppression,
    WireNames,
)
from bridge_rules.model import PrefixStrip as PrefixStripModel
from bridge_rules.names import Resolver
from bridge_rules.patterns import Pattern, PatternError, compile_pattern
from bridge_rules.pins import Pin, PinError, load_pin
from bridge_rules.policy import NO_POLICY, CompiledPolicy, compile_policy, packaged_switches
from bridge_rules.repair.rules import RepairSet, compile_repair_section
from bridge_rules.runtime import Adapters, Converter, HistoryPlan, Runtime
from bridge_rules.schemas import DEFAULT_TARGET, Profile, profile
from bridge_rules.source import DocPath, Span
from bridge_rules.stages import (
    CompiledStage,
    Gateway,
    NameGuard,
    PatternStage,
    PrefixStrip,
    Strip,
    TableStage,
)
from bridge_rules.stages import PrefixStage as CompiledPrefix
from bridge_rules.textplan import compile_plan


@dataclass(frozen=True)
class Sourced:
    """A section value and the file that (last) wrote it."""

    value: Any
    file: SourcedFile


@dataclass(frozen=True, kw_only=True)
class _StageDraft:
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


def _overlay_stage(base: _StageDraft, later: list[_StageDraft]) -> _StageDraft:
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
    return _StageDraft(
        model=old.model_copy(update=changes),
        id=base.id,
        path=base.path,
        entry_spans=spans,
        file=base.file,
    )


def _layer_stages(files: tuple[SourcedFile, ...]) -> list[_StageDraft]:
    """Every file's stages in layering order: a new id goes before the inherited stages, a
    known one is laid over the stage that holds it (:func:`_overlay_stage`, once at the end)."""
    slots: list[tuple[_StageDraft, list[_StageDraft]]] = []
    position: dict[str, int] = {}
    for file in files:
        if file.rules.names is None:
            continue
        fresh: list[tuple[_StageDraft, list[_StageDraft]]] = []
        for index, (stage, sid) in enumerate(zip(file.rules.names, _stage_ids(file), strict=True)):
            draft = _StageDraft(
                model=stage,
                id=sid,
                path=("names", index),
                entry_spans=_entry_spans(file, index, stage),
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
    stages = [_overlay_stage(base, later) for base, later in slots]
    return [s for s in stages if s.model.enabled]


def _layer_section(files: tuple[SourcedFile, ...], key: str) -> Sourced | None:
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


def _last_file_setting(
    files: tuple[SourcedFile, ...], section: str, field: str
) -> SourcedFile | None:
    """The file whose ``section.field`` won the layering (where to locate its problems)."""
    for file in reversed(files):
        value = getattr(file.rules, section)
        if value is not None and field in value.model_fields_set:
            return file
    return None


# ------------------------------------------------------------ compiler
class _Compiler:
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
        for draft in _layer_stages(self.files):
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
        draft: _StageDraft,
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
        self, common: dict[str, Any], draft: _StageDraft, model: CanonicalStage, pin: Pin | None
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

    def aliases(self, common: dict[str, Any], draft: _StageDraft, model: AliasStage) -> TableStage:
        spans, where = draft.entry_spans, draft.span  # `span` is a lookup: once, not per entry
        entries = {k: (v, spans.get(k, where)) for k, v in model.map.items()}
        inverse = {k: (v, spans.get("<inverse>" + k, where)) for k, v in model.inverse.items()}
        return TableStage(
            **common, case=model.case, reverse=model.reverse, entries=entries, inverse=inverse
        ).build()

    def passthrough(
        self, common: dict[str, Any], draft: _StageDraft, model: PassthroughStage
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

    # -------------------------------------------------------- sections
    def gate(self) -> CompiledGate:
        layered = _layer_section(self.files, "gate")
        if layered is None:
            return CompiledGate()
        model: Gate = layered.value
        model_re = None
        if model.model is not None:
            file = _last_file_setting(self.files, "gate", "model") or layered.file
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
        file = _last_file_setting(self.files, "inbound", "strip_suffixes") or inbound.file
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
        file = _last_file_setting(self.files, "inbound", "strip_prefixes") or inbound.file
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
        setting = _last_file_setting(self.files, "inbound", "match_registered") or inbound.file
        return Gateway(
            prefixes=prefixes,
            doubled=tuple(doubled.items()),
            match_registered=model.match_registered,
            span=setting.doc.source_map.key_span(("inbound", "match_registered")),
        )

    def wire_names(self, target: str | None) -> NameGuard:
        layered = _layer_section(self.files, "wire_names")
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
        layered = _layer_section(self.files, "schemas")
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
        file = _last_file_setting(self.files, "text", "system") or self.files[-1]
        return file.doc.source_map.value_span(("text", "system", index, key))

    # ------------------------------------------------------------ run
    def run(self) -> Runtime:
        pin, self.pin_span = self.pin("pin")
        local_pin, _ = self.pin("local_pin")
        bindings = self.bindings()
        stages = self.stages(pin, bindings)
        gate = self.gate()
        inbound = _layer_section(self.files, "inbound")
        text = _layer_section(self.files, "text")
        filters = _layer_section(self.files, "filters")
        debug_log = _layer_section(self.files, "debug_log")
        adapters, problems = compile_adapters(
            (b.binding, b.span, b.file.doc.source_map, b.index) for b in bindings.values()
        )
        self.diags.extend(problems)
        plan, problems = compile_plan(
            text.value if text else None, filters.value if filters else None, self.text_span
        )
        self.diags.extend(problems)
        policy, problems = compile_policy(
            [(f.rules.policy, f.doc.source_map) for f in self.files if f.rules.policy is not None],
            packaged_switches(),
        )
        self.diags.extend(problems)
        policy = policy.with_prefixes(
            tuple(s.value for s in stages if isinstance(s, CompiledPrefix) and s.value)
        )
        schema_profile, schema_span = self.schemas()
        gateway = self.gateway(inbound, stages)  # before `diagnostics` is taken: it reports
        repairs = compile_repair_section(
            (f.rules.repair or [], f.doc.source_map) for f in self.files
        )
        rules = CompiledRules(
            files=self.files,
            stages=tuple(stages),
            gate=gate,
            inbound_case=inbound.value.case if inbound else Inbound().case,
            strips=tuple(self.strips(inbound)),
            bindings=bindings,
            pin=pin,
            pin_span=self.pin_span,
            local_pin=local_pin,
            local_tools=tuple(self.local_tools(local_pin).items()),
            text=text.value if text else None,
            filters=filters.value if filters else None,
            suppressions=tuple(self.suppressions()),
            diagnostics=tuple(self.diags),
            adapters=adapters,
            repairs=repairs,
            gateway=gateway,
            unmapped=inbound.value.unmapped if inbound else Inbound().unmapped,
            agent_dispatch=inbound.value.agent_dispatch if inbound else "exact",
            wire_names=self.wire_names(schema_profile.target),
            schemas=schema_profile,
            schemas_span=schema_span,
            debug_log=debug_log.value if debug_log else None,
        )
        return build_runtime(rules, plan, policy)


def retargeted(rt: Runtime, target: str) -> Runtime:
    """These rules converting tool schemas for another target (a ``serve`` route's
    ``target:``), their operations and ``ref_depth`` otherwise as written."""
    written = rt.rules.schemas
    own = profile(written.target).operations
    extra = tuple(op for op in written.operations if op not in own)
    chosen = profile(None if target == "none" else target, extra)
    schemas = dataclasses.replace(chosen, ref_depth=rt.rules.schemas.ref_depth)
    rules = dataclasses.replace(rt.rules, schemas=schemas)
    return build_runtime(rules, rt.plan, rt.policy).with_sealer(rt.sealer)


def build_runtime(rules: CompiledRules, plan: Any, policy: CompiledPolicy = NO_POLICY) -> Runtime:
    """Precompute what requests need: effective adapters and every known name's history plan."""
    resolver = Resolver(
        stages=rules.stages,
        strips=rules.strips,
        insensitive=rules.inbound_case == "insensitive",
        local_tools=(name for name, _span in rules.local_tools),
        gateway=rules.gateway,
        guard=rules.wire_names,
    )
    effective: dict[str, Adapter] = {
        local: adapter
        for local, adapter in rules.adapters.items()
        if resolver.outbound(local).wire == adapter.wire
    }
    history: dict[str, HistoryPlan] = {}
    for local in dict.fromkeys([*resolver.known_locals, *rules.adapters, *rules.repairs.internal]):
        adapter = effective.get(local)
        convert = adapter.to_wire if adapter is not None and adapter.history else None
        history[local] = (resolver.outbound(local).wire, _scrubbed(rules.repairs, local, convert))
    folded = any(s.kind == "bindings" and s.case == "insensitive" for s in rules.stages)
    return Runtime(
        rules=rules,
        resolver=resolver,
        gate=rules.gate,
        plan=plan,
        policy=policy,
        adapters=Adapters(effective, folded),
        repairs=rules.repairs,
        history=history,
    )


def _scrubbed(repairs: RepairSet, local: str, convert: Converter | None) -> Converter | None:
    """History replay never sends what repair recorded for itself (internal keys)."""
    if local not in repairs.internal:
        return convert

    def run(arguments: Any) -> Any:
        clean = repairs.scrub(local, arguments)
        return convert(clean) if convert is not None else clean

    return run


def compile_rules(source: RuleSource) -> Runtime:
    """Compile loaded rule files; problems are on ``.rules.diagnostics`` and nothing raises."""
    return _Compiler(source).run()
