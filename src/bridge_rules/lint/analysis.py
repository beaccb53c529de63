"""One rule set, checked once: the single definition of what makes rules invalid.

``analyse`` loads a rule set (with what it ``extends``), compiles it into a
:class:`~bridge_rules.runtime.Runtime`, runs every registered check over it and
applies the files' ``suppress:`` entries. ``bridge-rules lint`` reports its
findings; ``bridge_rules.load()`` refuses a rule set for which it finds an
error. Because both call this function, a rule set loads exactly when lint
reports no error for it.

A ``suppress:`` entry silences findings of its ``code`` (and, with ``match``,
only those whose message contains that text) located in the file that declares
it, so a profile that reproduces a peer's flaw on purpose stays explicit about
it without hiding anything in the files built on top of it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bridge_rules.compiler import compile_rules
from bridge_rules.compose import RuleSource, SourcedFile, load_sources, placed
from bridge_rules.diagnostics import Diagnostic, Severity, has_errors, sort_diagnostics, warning
from bridge_rules.gcpause import promote_young
from bridge_rules.lint.catalogue import load_checks
from bridge_rules.lint.registry import LintContext
from bridge_rules.model import Suppression
from bridge_rules.pins import Pin
from bridge_rules.runtime import Runtime
from bridge_rules.source import Span

# Problems that mean the input could not be read at all (rather than read and found wrong).
UNLOADABLE_CODES = frozenset({"BR001", "BR002", "BR008", "BR010", "BR015"})
UNUSED_SUPPRESSION = "BR308"

Target = str | Path | Sequence[str | Path] | None


@dataclass
class Analysis:
    """The outcome of checking one rule set. ``runtime`` is None when nothing compiled."""

    target: str
    runtime: Runtime | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    suppressed: list[Diagnostic] = field(default_factory=list)

    @property
    def unloadable(self) -> bool:
        return any(d.code in UNLOADABLE_CODES for d in self.diagnostics)

    @property
    def has_errors(self) -> bool:
        return any(d.severity is Severity.ERROR for d in self.diagnostics)


def _with_pin(source: RuleSource, pin: Pin) -> RuleSource:
    """``--pin``: the last file's pin (the one that wins when layering) becomes ``pin``."""
    if not source.files:
        return source
    last = source.files[-1]
    files = [
        *source.files[:-1],
        SourcedFile(last.rules.model_copy(update={"pin": pin.spec}), last.doc),
    ]
    return RuleSource(files, list(source.diagnostics), source.entered)


def _source_suppressions(source: RuleSource) -> list[tuple[Suppression, Span]]:
    return [
        (sup, file.doc.source_map.key_span(("suppress", index)))
        for file in source.files
        for index, sup in enumerate(file.rules.suppress)
    ]


def apply_suppressions(
    diags: Iterable[Diagnostic],
    suppressions: Sequence[tuple[Suppression, Span]],
    report_unused: bool = True,
) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """(kept, suppressed); an unused suppression is itself reported (BR308)."""
    kept: list[Diagnostic] = []
    dropped: list[Diagnostic] = []
    used: set[int] = set()
    for diag in diags:
        hit = next(
            (
                i
                for i, (sup, span) in enumerate(suppressions)
                if sup.code == diag.code
                and span.file == diag.span.file
                and (sup.match is None or sup.match in diag.message)
            ),
            None,
        )
        if hit is None:
            kept.append(diag)
        else:
            used.add(hit)
            dropped.append(diag)
    for index, (sup, span) in enumerate(suppressions):
        if report_unused and index not in used:
            what = f"{sup.code} findings" + (f' containing "{sup.match}"' if sup.match else "")
            kept.append(
                warning(
                    UNUSED_SUPPRESSION,
                    f"suppression of {what} matches nothing in this file",
                    span,
                    hint="remove it, or fix its code or match",
                )
            )
    return sort_diagnostics(kept), dropped


def run_checks(
    runtime: Runtime, pin: Pin | None, schema_targets: tuple[str, ...] = ()
) -> list[Diagnostic]:
    """Every registered check over one compiled rule set."""
    ctx = LintContext(runtime=runtime, pin=pin, schema_targets=schema_targets)
    found: list[Diagnostic] = []
    for registered in load_checks():
        found.extend(registered.func(ctx))
    return found


def analyse(
    target: Target, pin: Pin | None = None, schema_targets: tuple[str, ...] = ()
) -> Analysis:
    """Load, compile and check one rule set; ``pin`` overrides the files' own Claude Code pin.

    The cyclic garbage collector is paused meanwhile: loading builds hundreds of
    thousands of objects that all stay alive, and each collection would scan them
    again (a quarter of the time of a 100,000-entry table). It runs again after, with what
    was built already in its oldest generation (:func:`~bridge_rules.gcpause.promote_young`).
    """
    paused = gc.isenabled()
    gc.disable()
    try:
        return _analyse(target, pin, schema_targets)
    finally:
        if paused:
            promote_young()
            gc.enable()


def _analyse(target: Target, pin: Pin | None, schema_targets: tuple[str, ...]) -> Analysis:
    refs = list(target) if isinstance(target, Sequence) and not isinstance(target, str) else target
    source = load_sources(refs)
    if pin is not None:
        source = _with_pin(source, pin)
    name = str(target) if not isinstance(refs, list) else ", ".join(map(str, refs))
    return analyse_source(source, name, schema_targets)


def analyse_source(source: RuleSource, name: str, schema_targets: tuple[str, ...] = ()) -> Analysis:
    """Compile and check rule files already loaded (:func:`analyse` after loading; the
    bindings added at run time, ``ruleset.with_bindings``, through the same checks)."""
    result = Analysis(name)
    found: list[Diagnostic] = list(source.diagnostics)
    runtime: Runtime | None = None
    if source.files and not has_errors(source.diagnostics):
        runtime = compile_rules(source)
        found = list(runtime.rules.diagnostics)
        found.extend(run_checks(runtime, runtime.rules.pin, schema_targets))
        suppressions: Sequence[tuple[Suppression, Span]] = runtime.rules.suppressions
    else:
        suppressions = _source_suppressions(source)
    result.runtime = runtime
    kept, result.suppressed = apply_suppressions(
        sort_diagnostics(found), suppressions, report_unused=runtime is not None
    )
    result.diagnostics = sort_diagnostics(placed(d, source.entered) for d in kept)
    return result
