"""``bridge-rules lint``: every problem of one or more rule sets, in one run."""

from __future__ import annotations

import enum
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from bridge_rules.cli.app import app, fail, split_names

if TYPE_CHECKING:
    from bridge_rules.diagnostics import Diagnostic
    from bridge_rules.reporters import Summary


class Format(str, enum.Enum):
    """``lint --format``: the reporters (bridge_rules.reporters.REPORTERS)."""

    text = "text"
    json = "json"
    github = "github"
    sarif = "sarif"


@app.command()
def lint(  # noqa: PLR0917 - one parameter per CLI option
    paths: Annotated[
        Optional[list[str]],  # noqa: UP045 - typer needs Optional on 3.10
        typer.Argument(
            help="Rule files, directories or packaged profile names, each file linted as its "
            "own rule set with what it extends. Default: the project's rule files "
            "(bridge-rules.yaml, *.bridge-rules.yaml, .bridge-rules/, rules/, or "
            "[tool.bridge-rules] rules in pyproject.toml).",
            metavar="[PATH]...",
            show_default=False,
        ),
    ] = None,
    layered: Annotated[
        bool,
        typer.Option(
            "--layered",
            help="Lint all PATHs as one composed rule set (later files override earlier ones), "
            "as `--rules a --rules b` loads them.",
        ),
    ] = False,
    serve_config: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            "--config",
            help="Lint what a `serve --config FILE` runs instead of PATHs: each rule set its "
            "routes and `rules` name, layered as serve loads them, and each route's `model:` "
            "against the models those rules send a forced tool_choice to (BR322).",
            metavar="FILE",
        ),
    ] = None,
    pin: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            help="Check against this pin instead of the files' own, e.g. claude-code@2.1.0.",
            metavar="PIN",
        ),
    ] = None,
    schema_target: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Option(
            "--target",
            help="Check the schemas of the pinned tools against this API (anthropic, "
            "openai-strict, gemini, bedrock): what it would reject, and whether the rules' "
            "`schemas:` convert it. Repeat for several.",
            metavar="API",
        ),
    ] = None,
    fmt: Annotated[
        Optional[Format],  # noqa: UP045
        typer.Option(
            "--format",
            "-f",
            help="Report format. Default: github under GitHub Actions, else text.",
            show_default=False,
        ),
    ] = None,
    output: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            "--output",
            "-o",
            help="Write the report to this file instead of stdout.",
            metavar="FILE",
        ),
    ] = None,
    select: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            help="Report only findings whose code is one of these or starts with one, e.g. "
            "BR3,BR401 (every BR3xx, and BR401).",
            metavar="CODE,...",
        ),
    ] = None,
    ignore: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            help="Drop findings whose code is one of these or starts with one, e.g. BR308,BR2.",
            metavar="CODE,...",
        ),
    ] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Warnings fail the run too.")] = False,
    exit_zero: Annotated[
        bool,
        typer.Option("--exit-zero", help="Exit 0 even with findings (still 2 for bad input)."),
    ] = False,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose",
            "-v",
            help="Say which files a bare `lint` found, and which YAML under rules/ it skipped "
            "because it does not start with 'bridge-rules:'.",
        ),
    ] = False,
) -> int:
    """Check rule files against the pinned Claude Code tool schemas.

    Exit status: 0 clean, 1 findings (errors; with --strict warnings too),
    2 unreadable input, no rule files found, or usage error, 3 internal error.
    """
    from bridge_rules.diagnostics import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, Severity
    from bridge_rules.lint.runner import lint as run_lint
    from bridge_rules.pins import Pin, PinError, load_pin
    from bridge_rules.reporters import Summary

    chosen = (
        fmt.value if fmt else "github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text"
    )
    pinned: Pin | None = None
    if pin is not None:
        try:
            pinned = load_pin(pin)
        except PinError as exc:
            fail(exc.describe())
        if pinned.product != "claude-code":
            fail(f"--pin takes a Claude Code pin (claude-code@<version>), not '{pin}'")
    kept, dropped = _codes(select, ignore)
    apis = _schema_targets(schema_target or [])
    if serve_config is not None:
        if paths:
            fail("name PATHs or --config FILE, not both")
        from bridge_rules.cli.serve_lint import lint_config

        report = lint_config(serve_config, pinned, apis)
    else:
        targets, layered, refused = _targets(paths or [], layered, verbose)
        report = run_lint([targets] if layered and targets else targets, pinned, refused, apis)
    diags = _filtered(report.diagnostics, kept, dropped)
    summary = Summary(
        rule_sets=len(report.targets),
        errors=sum(1 for d in diags if d.severity is Severity.ERROR),
        warnings=sum(1 for d in diags if d.severity is Severity.WARNING),
        infos=sum(1 for d in diags if d.severity is Severity.INFO),
        suppressed=report.suppressed,
    )
    _write(chosen, diags, summary, output)
    if report.unloadable:
        return EXIT_USAGE
    failing = summary.errors + (summary.warnings if strict else 0)
    return EXIT_FINDINGS if failing and not exit_zero else EXIT_OK


def _schema_targets(apis: list[str]) -> tuple[str, ...]:
    from bridge_rules.schemas import TARGETS

    for api in apis:
        if api not in TARGETS:
            fail(f"--target takes one of {', '.join(TARGETS)}, not '{api}'")
    return tuple(dict.fromkeys(apis))


def _targets(
    paths: list[str], layered: bool, verbose: bool
) -> tuple[list[str | Path], bool, list[Diagnostic]]:
    """The rule sets to lint: the PATHs (a directory's files one by one), or the project's;
    and the discovered files refused before loading (a symlink out of the project)."""
    from bridge_rules.lint.discover import WHERE, DiscoveryError, discover, expand_directory

    if not paths:
        try:
            found = discover(Path("."))
        except DiscoveryError as exc:
            fail(str(exc))
        if verbose:
            _say(f"found {len(found.paths)} rule files ({found.source}):", found.paths)
            _say("skipped, not starting with 'bridge-rules:':", found.skipped)
        if not found.paths and not found.problems:
            fail(
                f"no rule files found in this project (looked for {WHERE}, and "
                "[tool.bridge-rules] in pyproject.toml); name files or profiles, e.g. "
                "`bridge-rules lint default`"
            )
        return list(found.paths), layered or found.layered, found.problems
    targets: list[str | Path] = []
    for path in paths:
        files = expand_directory(Path(path)) if not layered and Path(path).is_dir() else []
        # An empty directory stays a target: the loader reports it (BR001), never the
        # packaged rules in its place.
        targets.extend(files or [path])
    return targets, layered, []


def _say(what: str, paths: list[Path]) -> None:
    """``lint -v``: what discovery did, on stderr so that the report stays clean."""
    from bridge_rules.source import escape

    if paths:
        lines = "".join(f"  {escape(str(path))}\n" for path in paths)
        sys.stderr.write(f"bridge-rules: {what}\n{lines}")


def _codes(select: str | None, ignore: str | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``--select``'s and ``--ignore``'s codes, upper-cased. One that no code starts with is a
    usage error, since filtering by it would silently keep or drop nothing."""
    from bridge_rules.codes import CODES

    prefixes = ", ".join(sorted({known[:3] for known in CODES}))
    chosen: list[tuple[str, ...]] = []
    problems = []
    for option, value in (("select", select), ("ignore", ignore)):
        given = tuple(code.upper() for code in split_names(value) or ())
        unknown = [code for code in given if not any(k.startswith(code) for k in CODES)]
        if unknown:
            problems.append(
                f"--{option}: no code starts with {', '.join(map(repr, unknown))}; codes "
                f"start with {prefixes} (`bridge-rules codes` lists them)"
            )
        chosen.append(given)
    if problems:
        fail(*problems)
    return chosen[0], chosen[1]


def _filtered(
    diags: list[Diagnostic], kept: tuple[str, ...], dropped: tuple[str, ...]
) -> list[Diagnostic]:
    """``--select``/``--ignore`` by code or code prefix (``BR3`` is every BR3xx)."""
    return [
        d
        for d in diags
        if (not kept or d.code.startswith(kept)) and not (dropped and d.code.startswith(dropped))
    ]


def _write(fmt: str, diags: list[Diagnostic], summary: Summary, output: str | None) -> None:
    import io

    from bridge_rules.cli.style import paint
    from bridge_rules.reporters import get

    reporter = get(fmt)
    if output is None:
        buffer = io.StringIO()
        reporter(diags, summary, buffer)
        text = buffer.getvalue()
        sys.stdout.write(paint(text, sys.stdout) if fmt == "text" else text)
        return
    try:
        with open(output, "w", encoding="utf-8") as stream:
            reporter(diags, summary, stream)
    except OSError as exc:
        fail(f"cannot write {output}: {exc.strerror}")
