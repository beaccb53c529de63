"""Lint rule sets: load, compile, run every registered check, apply suppressions.

Each target (a file, a directory, or a packaged profile name) is linted as its
own rule set together with what it ``extends``. Every problem of a run is
collected as data; nothing here prints or exits (the CLI decides exit codes).

A ``suppress:`` entry silences findings of its ``code`` (and, with ``match``,
only those whose message contains that text) located in the file that declares
it, so a profile that reproduces a peer's flaw on purpose stays explicit about
it without hiding anything in the files built on top of it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from bridge_rules.compiler import CompiledRules, compile_rules
from bridge_rules.compose import RuleSource, SourcedFile, load_sources
from bridge_rules.diagnostics import Diagnostic, Severity, has_errors, sort_diagnostics, warning
from bridge_rules.engine import Engine
from bridge_rules.lint.registry import LintContext, load_checks, other_pins_for
from bridge_rules.model import Suppression
from bridge_rules.pins import Pin
from bridge_rules.resources import profile_names
from bridge_rules.source import Span

# Problems that mean the input could not be read at all (rather than read and found wrong).
UNLOADABLE_CODES = frozenset({"BR001", "BR002", "BR008", "BR010"})
UNUSED_SUPPRESSION = "BR308"


@dataclass
class TargetResult:
    """The outcome of linting one target."""

    target: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    suppressed: list[Diagnostic] = field(default_factory=list)

    @property
    def unloadable(self) -> bool:
        return any(d.code in UNLOADABLE_CODES for d in self.diagnostics)


@dataclass
class LintReport:
    targets: list[TargetResult]

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """Every finding of the run, deduplicated (profiles share files) and sorted."""
        return sort_diagnostics(d for t in self.targets for d in t.diagnostics)

    @property
    def suppressed(self) -> int:
        return len(sort_diagnostics(d for t in self.targets for d in t.suppressed))

    @property
    def unloadable(self) -> bool:
        return any(t.unloadable for t in self.targets)

    def count(self, severity: Severity) -> int:
        return sum(1 for d in self.diagnostics if d.severity is severity)


def default_targets() -> list[str]:
    """With no PATH: the packaged default rules and every packaged profile."""
    return profile_names()


def _with_pin(source: RuleSource, pin: Pin) -> RuleSource:
    """``--pin``: the last file's pin (the one that wins when layering) becomes ``pin``."""
    if not source.files:
        return source
    last = source.files[-1]
    files = [
        *source.files[:-1],
        SourcedFile(last.rules.model_copy(update={"pin": pin.spec}), last.doc),
    ]
    return RuleSource(files, list(source.diagnostics))


def _check_diagnostics(engine: Engine, pin: Pin | None) -> list[Diagnostic]:
    ctx = LintContext(engine=engine, pin=pin, other_pins=other_pins_for(pin))
    found: list[Diagnostic] = []
    for registered in load_checks():
        found.extend(registered.func(ctx))
    return found


def _suppressions(
    rules: CompiledRules | None, source: RuleSource
) -> list[tuple[Suppression, Span]]:
    if rules is not None:
        return rules.suppressions
    out = []
    for file in source.files:
        for index, sup in enumerate(file.rules.suppress):
            out.append((sup, file.doc.source_map.key_span(("suppress", index))))
    return out


def _apply_suppressions(
    diags: Iterable[Diagnostic],
    suppressions: list[tuple[Suppression, Span]],
    report_unused: bool = True,
) -> tuple[list[Diagnostic], list[Diagnostic]]:
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
    return kept, dropped


def lint_target(target: str | Path, pin: Pin | None = None) -> TargetResult:
    """Lint one rule set: loader, validation and compiler diagnostics, then every check."""
    source = load_sources(target)
    result = TargetResult(str(target))
    if pin is not None:
        source = _with_pin(source, pin)
    found: list[Diagnostic] = list(source.diagnostics)
    rules: CompiledRules | None = None
    if source.files and not has_errors(source.diagnostics):
        rules = compile_rules(source)
        engine = Engine(rules)
        # Collisions come from the lint check (so suppressions are counted), not the engine.
        found = [d for d in engine.diagnostics if d.code != "BR203"]
        found.extend(_check_diagnostics(engine, rules.pin))
    result.diagnostics, result.suppressed = _apply_suppressions(
        sort_diagnostics(found), _suppressions(rules, source), report_unused=rules is not None
    )
    result.diagnostics = sort_diagnostics(result.diagnostics)
    return result


def lint(targets: list[str | Path] | None = None, pin: Pin | None = None) -> LintReport:
    chosen: list[str | Path] = list(targets) if targets else list(default_targets())
    return LintReport([lint_target(t, pin) for t in chosen])
