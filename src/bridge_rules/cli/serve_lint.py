"""What lint says about a ``serve --config`` file: the rule sets its routes run, and the
models their ``model:`` globs fix (BR322, :mod:`bridge_rules.lint.route_models`).

``lint --config FILE`` lints every rule set the file's routes and its ``rules`` name, each
layered as ``serve`` loads it, and adds BR322 for each route; ``serve`` says the BR322 lines
as warnings when it starts. Both build the routes here, so they report the same thing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from bridge_rules.cli.app import CommandError

if TYPE_CHECKING:
    from bridge_rules.diagnostics import Diagnostic
    from bridge_rules.lint.runner import LintReport
    from bridge_rules.modelrules import ModelTable
    from bridge_rules.pins import Pin
    from bridge_rules.proxy.routespec import RouteSpec
    from bridge_rules.source import Span

RuleSet = tuple[str, ...]


def rule_set(spec: RouteSpec | None, serve_rules: Sequence[str]) -> RuleSet:
    """The rule files a route (None: ``serve`` without routes) runs, as ``serve`` loads
    them: its own, else ``serve``'s ``rules``, else ``default``."""
    own = tuple(spec.rules) if spec is not None else ()
    return own or tuple(serve_rules) or ("default",)


def fixed_models(
    routes: Sequence[RouteSpec],
    spans: dict[str, Span],
    table: Callable[[RouteSpec], ModelTable | None],
) -> list[Diagnostic]:
    """BR322 for each route with a ``model:`` whose rules' table (``table``; None when they
    do not load, which is reported elsewhere) keeps a forced tool_choice its models refuse."""
    from bridge_rules.lint.route_models import FixedRoute, fixed_model_findings

    fixed = []
    for spec in routes:
        if spec.model is None or spec.name not in spans:
            continue
        models = table(spec)
        if models is not None:
            fixed.append(FixedRoute(spec.name, spec.model, spans[spec.name], models))
    return list(fixed_model_findings(fixed))


def lint_config(path: str, pin: Pin | None = None, apis: tuple[str, ...] = ()) -> LintReport:
    """``lint --config FILE``: each rule set the file's routes run, linted, and BR322 for
    each route. A file ``serve`` would refuse stops here (exit 2, its problems said)."""
    from bridge_rules.lint.runner import lint
    from bridge_rules.proxy.settingsfile import read_settings

    found = read_settings(path)
    if found.problems:
        raise CommandError(*(problem.line() for problem in found.problems))
    serve_rules = [str(r) for r in found.values.get("rules") or ()]
    sets = list(dict.fromkeys([rule_set(s, serve_rules) for s in found.routes]))
    sets = sets or [rule_set(None, serve_rules)]
    chosen: list[str | Path | Sequence[str | Path]] = [list(s) for s in sets]
    report = lint(chosen, pin, (), apis)
    tables = {
        s: analysis.runtime.rules.models
        for s, analysis in zip(sets, report.targets, strict=True)
        if analysis.runtime is not None and not analysis.has_errors
    }
    extra = fixed_models(
        found.routes, found.route_models, lambda spec: tables.get(rule_set(spec, serve_rules))
    )
    report.across.extend(extra)
    return report
