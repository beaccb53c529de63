"""``bridge-rules lint``: every problem of one or more rule sets, in one run."""

from __future__ import annotations

import os
import sys
from typing import Annotated, Optional

import typer

from bridge_rules.cli.app import app, fail

FORMATS = ("text", "json", "github", "sarif")


@app.command()
def lint(
    paths: Annotated[
        Optional[list[str]],  # noqa: UP045 - typer needs Optional on 3.10
        typer.Argument(
            help="Rule files, directories or packaged profile names, each linted as its own "
            "rule set with what it extends. Default: the packaged default rules and every "
            "packaged profile.",
            metavar="[PATHS]...",
        ),
    ] = None,
    pin: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            help="Check against this pin instead of the files' own, e.g. claude-code@2.1.0."
        ),
    ] = None,
    fmt: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            "--format",
            "-f",
            help="text, json, github or sarif. Default: github under GitHub Actions, else text.",
        ),
    ] = None,
    output: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--output", "-o", help="Write the report to this file instead of stdout."),
    ] = None,
    strict: Annotated[bool, typer.Option(help="Warnings fail the run too.")] = False,
) -> None:
    """Check rule files against the pinned Claude Code tool schemas.

    Exit status: 0 clean, 1 findings (errors; with --strict warnings too),
    2 unreadable input or usage error, 3 internal error.
    """
    from bridge_rules.diagnostics import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, Severity
    from bridge_rules.lint.runner import lint as run_lint
    from bridge_rules.pins import Pin, PinError, load_pin
    from bridge_rules.reporters import Summary, get

    chosen = fmt or ("github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text")
    if chosen not in FORMATS:
        fail(f"unknown --format '{chosen}' (choose {', '.join(FORMATS)})")
    pinned: Pin | None = None
    if pin is not None:
        try:
            pinned = load_pin(pin)
        except PinError as exc:
            fail(exc.describe())
        if pinned.product != "claude-code":
            fail(f"--pin takes a Claude Code pin (claude-code@<version>), not '{pin}'")
    report = run_lint(list(paths) if paths else None, pinned)
    diags = report.diagnostics
    summary = Summary(
        rule_sets=len(report.targets),
        errors=report.count(Severity.ERROR),
        warnings=report.count(Severity.WARNING),
        infos=report.count(Severity.INFO),
        suppressed=report.suppressed,
    )
    reporter = get(chosen)
    if output is None:
        reporter(diags, summary, sys.stdout)
    else:
        try:
            with open(output, "w", encoding="utf-8") as stream:
                reporter(diags, summary, stream)
        except OSError as exc:
            fail(f"cannot write {output}: {exc.strerror}")
    if report.unloadable:
        raise typer.Exit(EXIT_USAGE)
    failing = summary.errors + (summary.warnings if strict else 0)
    raise typer.Exit(EXIT_FINDINGS if failing else EXIT_OK)
