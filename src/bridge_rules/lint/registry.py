"""The lint check registry: the stable API a check module is written against.

A check is a function registered under a name; it receives a
:class:`LintContext` for one rule set and yields diagnostics::

    from collections.abc import Iterator

    from bridge_rules.diagnostics import Diagnostic, error
    from bridge_rules.lint.registry import LintContext, check

    @check("example", codes=("BR3xx",))
    def example(ctx: LintContext) -> Iterator[Diagnostic]:
        for name, span in ctx.rules.local_tools:
            if ctx.pin is not None and not ctx.pin.has_tool(name):
                yield error("BR3xx", f"'{name}' ...", span)

Put the module in ``bridge_rules/lint/checks/``;
:func:`bridge_rules.lint.catalogue.load_checks` imports
every module there, so no list has to be edited. Rules for checks:

* never raise for bad rules: report a located diagnostic instead (an exception
  escaping a check is an internal error, exit 3);
* use the compiled rules and the runtime (``ctx.runtime.resolver``) rather than
  re-implementing resolution, so lint and the runtime cannot disagree;
* anchor every diagnostic at the rule text (``ctx.span(file, path)`` or the
  spans compiled entries carry); put a winner or a cause in ``related``;
* suppressions (``suppress:`` in a rule file) are applied by the runner, not by
  checks.

The context is built whenever the files loaded and validated (compile errors
such as a bad pattern leave that part out of the runtime), so every problem is
reported in one run. ``bridge_rules.load()`` runs the same checks
(:func:`bridge_rules.lint.analysis.analyse`), so an error here means the rule
set does not load.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bridge_rules.diagnostics import Diagnostic
from bridge_rules.pins import Pin, PinError, available, load_pin
from bridge_rules.source import DocPath, Span

if TYPE_CHECKING:
    from bridge_rules.compiled import CompiledRules
    from bridge_rules.compose import SourcedFile
    from bridge_rules.runtime import Runtime

CheckFn = Callable[["LintContext"], Iterable[Diagnostic]]


@dataclass(frozen=True)
class Check:
    name: str
    func: CheckFn
    codes: tuple[str, ...]
    doc: str


REGISTRY: dict[str, Check] = {}


def check(name: str, codes: Iterable[str] = ()) -> Callable[[CheckFn], CheckFn]:
    """Register ``func`` as the check ``name``; ``codes`` documents what it can report."""

    def register(func: CheckFn) -> CheckFn:
        if name in REGISTRY and REGISTRY[name].func is not func:
            raise ValueError(f"lint check '{name}' registered twice")
        REGISTRY[name] = Check(name, func, tuple(codes), (func.__doc__ or "").strip())
        return func

    return register


@dataclass
class LintContext:
    """One compiled rule set and everything a check may need to judge it.

    ``pin`` is the Claude Code pin the set is checked against (the files' own,
    or ``--pin``); ``other_pins`` are the other pinned versions of the same
    product (for drift hints), oldest first, loaded on first use; ``local_pin`` is the local agent's
    pin (e.g. ``pi@0.73.1``) or None; ``files`` are the loaded files in
    application order, each with its plain data and source map.
    """

    runtime: Runtime
    pin: Pin | None
    schema_targets: tuple[str, ...] = ()
    """``lint --target``: APIs the pinned tools' schemas are checked against."""

    @property
    def rules(self) -> CompiledRules:
        return self.runtime.rules

    @property
    def local_pin(self) -> Pin | None:
        return self.runtime.rules.local_pin

    @property
    def files(self) -> tuple[SourcedFile, ...]:
        return self.runtime.rules.files

    @functools.cached_property
    def other_pins(self) -> list[Pin]:
        """Only loaded when a check needs a drift hint."""
        return other_pins_for(self.pin)

    def span(self, file: SourcedFile, path: DocPath, *, value: bool = False) -> Span:
        """Where ``path`` (e.g. ``("bindings", 0, "wire")``) was written in ``file``."""
        smap = file.doc.source_map
        return smap.value_span(path) if value else smap.key_span(path)

    def pins_having(self, tool: str) -> list[Pin]:
        """Other pinned versions that have ``tool`` (for "present in 2.1.0" hints)."""
        return [p for p in self.other_pins if p.has_tool(tool)]


def other_pins_for(pin: Pin | None) -> list[Pin]:
    """Every other pinned version of ``pin``'s product, oldest first."""
    if pin is None:
        return []
    out = []
    for version in available(pin.product):
        if version == pin.version:
            continue
        try:
            out.append(load_pin(f"{pin.product}@{version}"))
        except (PinError, ValueError, KeyError):  # a broken pin file must not break lint
            continue
    return out
