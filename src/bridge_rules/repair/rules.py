"""``repair:`` entries compiled into steps per local tool (the same Step type bindings use,
so ``explain --args`` shows repairs beside binding operations).

What a repair records for itself (``strip_pipeline.record`` keys, and the note
:data:`NOTE_KEY` every strip leaves) is internal: :meth:`RepairSet.repair_noted`
takes it out of the arguments and hands it back separately, so it never reaches
the agent nor, through history, the upstream.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bridge_rules.model_bindings import EditShorthand, Repair, StripPipeline
from bridge_rules.repair.jsnum import parse_float
from bridge_rules.repair.pipeline import Stripped, strip_extractors
from bridge_rules.source import SourceMap
from bridge_rules.steps import Fn, SpanOf, Step, entry_spans, run_steps


def _alias_fn(aliases: dict[str, list[str]]) -> Callable[[dict[str, Any]], None]:
    """pi-tool-guard's ``renameAliasKeys``: an alias overwrites the canonical key, last wins."""
    target = {alias: canonical for canonical, names in aliases.items() for alias in names}
    canonical = frozenset(aliases)

    def run(obj: dict[str, Any]) -> None:
        for key in list(obj):
            if key in canonical or key not in target:
                continue
            obj[target[key]] = obj.pop(key)

    return run


def _shorthand_fn(spec: EditShorthand) -> Fn:
    def run(work: dict[str, Any]) -> None:
        if isinstance(work.get(spec.into), list):
            return
        if not all(isinstance(work.get(f), str) for f in spec.fields):
            return
        work[spec.into] = [{f: work.pop(f) for f in spec.fields}]

    return run


def _json_arrays_fn(fields: list[str]) -> Fn:
    def run(work: dict[str, Any]) -> None:
        for name in fields:
            value = work.get(name)
            if not isinstance(value, str):
                continue
            try:
                parsed = json.loads(value)
            except ValueError:
                continue
            if isinstance(parsed, list):
                work[name] = parsed

    return run


def _aliases_in_fn(fields: list[str], rename: Callable[[dict[str, Any]], None]) -> Fn:
    def run(work: dict[str, Any]) -> None:
        for name in fields:
            value = work.get(name)
            if not isinstance(value, list):
                continue
            items = []
            for item in value:
                if isinstance(item, dict):
                    copied = dict(item)
                    rename(copied)
                    items.append(copied)
                else:
                    items.append(item)
            work[name] = items

    return run


def _numbers_fn(fields: list[str]) -> Fn:
    def run(work: dict[str, Any]) -> None:
        for name in fields:
            value = work.get(name)
            if isinstance(value, str):
                number = parse_float(value)
                if number is not None:
                    work[name] = number

    return run


NOTE_KEY = "\x00bridge-rules:strip_pipeline"
"""Where a strip step leaves its :class:`PipelineNote` while the steps run (never sent)."""


@dataclass(frozen=True)
class PipelineNote:
    """A trailing pipeline repair removed: to be applied to the call's result later."""

    field: str
    original: str
    commands: tuple[str, ...]


def _strip_fn(spec: StripPipeline) -> Fn:
    extractors = frozenset(spec.extractors)

    def run(work: dict[str, Any]) -> None:
        command = work.get(spec.field)
        if not isinstance(command, str):
            return
        result = strip_extractors(command, extractors)
        if result is None:
            return
        work[spec.field] = result.cleaned
        work[NOTE_KEY] = _note(spec.field, command, result)
        if "original" in spec.record:
            work[spec.record["original"]] = command
        if "removed" in spec.record:
            work[spec.record["removed"]] = True
        if "pipeline" in spec.record:
            work[spec.record["pipeline"]] = result.removed

    return run


def _note(field_name: str, command: str, result: Stripped) -> PipelineNote:
    return PipelineNote(field_name, command, result.commands)


def _steps(entry: Repair, span_of: SpanOf) -> list[Step]:
    steps: list[Step] = []

    def add(key: str, text: str, fn: Fn) -> None:
        steps.append(
            Step(kind=f"repair {key}", text=text, span=span_of((key,)), run=fn, exact=True)
        )

    rename = _alias_fn(entry.aliases)
    if entry.aliases:
        shown = ", ".join(f"{k} <- {'|'.join(v)}" for k, v in entry.aliases.items())
        add("aliases", shown, rename)
    if entry.shorthand is not None:
        sh = entry.shorthand
        add("shorthand", f"{', '.join(sh.fields)} -> {sh.into}[]", _shorthand_fn(sh))
    if entry.json_arrays:
        add("json_arrays", ", ".join(entry.json_arrays), _json_arrays_fn(entry.json_arrays))
    if entry.aliases_in:
        add("aliases_in", ", ".join(entry.aliases_in), _aliases_in_fn(entry.aliases_in, rename))
    if entry.numbers:
        add("numbers", "parseFloat " + ", ".join(entry.numbers), _numbers_fn(entry.numbers))
    if entry.strip_pipeline is not None:
        sp = entry.strip_pipeline
        text = f"{sp.field}: strip trailing {'|'.join(sp.extractors)}"
        add("strip_pipeline", text, _strip_fn(sp))
    return steps


@dataclass(frozen=True)
class RepairSet:
    """Repair steps by local tool name; later files' entries for a tool replace earlier ones.

    ``internal`` holds, per tool, the keys its repairs record for themselves: they are taken
    out of the arguments the agent gets and out of history sent upstream.
    """

    steps: Mapping[str, tuple[Step, ...]] = field(default_factory=dict)
    internal: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def repair(self, local: str, arguments: Any) -> Any:
        return self.repair_noted(local, arguments)[0]

    def repair_noted(self, local: str, arguments: Any) -> tuple[Any, dict[str, Any]]:
        """The repaired arguments without internal keys, and those keys' values."""
        steps = self.steps.get(local)
        if not steps:
            return arguments, {}
        work = run_steps(steps, arguments)
        return self._split(local, work)

    def scrub(self, local: str, arguments: Any) -> Any:
        """``arguments`` without the internal keys of ``local``'s repairs (history replay)."""
        return self._split(local, arguments)[0]

    def _split(self, local: str, arguments: Any) -> tuple[Any, dict[str, Any]]:
        keys = self.internal.get(local)
        if not keys or not isinstance(arguments, dict) or keys.isdisjoint(arguments):
            return arguments, {}
        kept = {k: v for k, v in arguments.items() if k not in keys}
        notes = {k: v for k, v in arguments.items() if k in keys}
        return kept, notes

    def has(self, local: str) -> bool:
        return local in self.steps


def compile_repairs(entries: Iterable[tuple[Repair, SpanOf]]) -> RepairSet:
    out: dict[str, tuple[Step, ...]] = {}
    internal: dict[str, frozenset[str]] = {}
    for entry, span_of in entries:
        steps = tuple(_steps(entry, span_of))
        keys = frozenset(_internal_keys(entry))
        for tool in entry.tools():
            out[tool] = steps
            internal[tool] = keys
    return RepairSet(out, {k: v for k, v in internal.items() if v})


def _internal_keys(entry: Repair) -> list[str]:
    if entry.strip_pipeline is None:
        return []
    return [NOTE_KEY, *entry.strip_pipeline.record.values()]


def compile_repair_section(files: Iterable[tuple[Iterable[Repair], SourceMap]]) -> RepairSet:
    """The ``repair:`` entries of layered files (``(entries, source map)`` in order)."""
    return compile_repairs(
        (entry, entry_spans(smap, ("repair", index)))
        for entries, smap in files
        for index, entry in enumerate(entries)
    )
