"""The typer application and the error policy shared by every command.

Exit codes: 0 clean, 1 findings, 2 usage error or unloadable input, 3 internal
error (130 on Ctrl-C). A user never sees a traceback unless ``BRIDGE_RULES_DEBUG=1``.
Command modules import their heavy dependencies inside the command body so
``bridge-rules --help`` stays fast.
"""

from __future__ import annotations

import functools
import os
import sys
from typing import Annotated, Any, NoReturn, Optional

import click
import typer
import typer.main

from bridge_rules.cli.style import Color, paint, set_mode
from bridge_rules.diagnostics import EXIT_INTERNAL, EXIT_USAGE

app = typer.Typer(
    name="bridge-rules",
    help="Declarative rules that translate agent tool names and arguments to and from "
    "Claude Code's canonical tools.",
    no_args_is_help=True,
    # `bridge-rules --install-completion bash|zsh|fish` (or --show-completion to see it).
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)


def _version(value: bool) -> None:
    if value:
        from bridge_rules.version import __version__

        sys.stdout.write(f"bridge-rules {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
    color: Annotated[
        Color,
        typer.Option(
            "--color",
            help="Colour severities: auto (on a terminal, unless NO_COLOR is set; FORCE_COLOR "
            "forces it), always or never.",
        ),
    ] = Color.auto,
    pins: Annotated[
        Optional[list[str]],  # noqa: UP045 - typer needs Optional on 3.10
        typer.Option(help="A directory of pins, searched first; repeat. See docs/pins.md."),
    ] = None,
    allow_outside: Annotated[
        bool,
        typer.Option(
            "--allow-outside",
            help="Let `extends` reach files outside the directory tree of the file that names "
            "them (also BRIDGE_RULES_ALLOW_OUTSIDE=1).",
        ),
    ] = False,
) -> None:
    """Declarative rules that translate agent tool names and arguments to and from Claude Code's
    canonical tools."""
    from bridge_rules.outside import set_allow_outside
    from bridge_rules.pins import use_dirs

    set_mode(color.value)
    use_dirs(pins or [])
    set_allow_outside(allow_outside)


# The `--rules` option every command that loads rules shares.
RulesOption = Annotated[
    Optional[list[str]],  # noqa: UP045 - typer needs Optional on 3.10
    typer.Option(
        "--rules",
        "-r",
        help="A rule file, a directory of them, or a packaged profile name; repeat to layer. "
        "Default: the packaged default rules.",
        metavar="PATH|PROFILE",
    ),
]


def _color_option(value: Color | None) -> None:
    if value is not None:
        set_mode(value.value)


# `--color` after a command too (`bridge-rules lint --color never`), for the commands that
# print severities; it overrides the one before the command.
ColorOption = Annotated[
    Optional[Color],  # noqa: UP045 - typer needs Optional on 3.10
    typer.Option(
        "--color",
        callback=_color_option,
        expose_value=False,
        help="Colour: auto (a terminal without NO_COLOR; FORCE_COLOR forces it), always, never.",
    ),
]


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """Print ``bridge-rules: error: message`` to stderr and exit."""
    sys.stderr.write(paint(f"bridge-rules: error: {message}\n", sys.stderr))
    raise typer.Exit(code)


def warn(message: str) -> None:
    """Print ``bridge-rules: warning: message`` to stderr."""
    sys.stderr.write(paint(f"bridge-rules: warning: {message}\n", sys.stderr))


def print_rules_error(exc: Exception) -> NoReturn:
    """Print every diagnostic of a RulesError, one line each, and exit 2."""
    for diag in getattr(exc, "diagnostics", []):
        sys.stderr.write(paint(diag.line() + "\n", sys.stderr))
    raise typer.Exit(EXIT_USAGE)


def split_names(value: str | None) -> list[str] | None:
    if value is None:
        return None
    return [n.strip() for n in value.split(",") if n.strip()]


def load_engine(rules: list[str] | None) -> Any:
    """Load rules named on the command line, turning bad rules into exit 2."""
    from bridge_rules.diagnostics import RulesError
    from bridge_rules.engine import load

    refs: Any = None
    if rules:
        refs = list(rules)
    try:
        return load(refs)
    except RulesError as exc:
        print_rules_error(exc)


# One module per command; each registers itself on `app` when imported. Listed
# here (not discovered) so the command set is explicit; a module that is not
# there yet is skipped.
COMMAND_MODULES = (
    "explain_cmd",
    "lint_cmd",
    "codes_cmd",
    "drift_cmd",
    "transform_cmd",
    "serve_cmd",
    "pin_cmd",
)


def _register() -> None:
    import importlib
    import importlib.util

    for name in COMMAND_MODULES:
        module = f"bridge_rules.cli.{name}"
        if importlib.util.find_spec(module) is not None:
            importlib.import_module(module)


@functools.cache
def click_command() -> click.Command:
    """The click command typer builds from ``app`` and its registered commands. Building it
    reads every command's signature (~4 ms); a process that calls :func:`main` more than
    once (tests, an embedding program) builds it once."""
    _register()
    return typer.main.get_command(app)


def main(argv: list[str] | None = None) -> int:
    command = click_command()
    try:
        command(args=argv, prog_name="bridge-rules", standalone_mode=True)
    except SystemExit as exc:
        return (
            int(exc.code or 0)
            if isinstance(exc.code, int)
            else (0 if exc.code is None else EXIT_USAGE)
        )
    except KeyboardInterrupt:
        sys.stderr.write("bridge-rules: interrupted\n")
        return 130
    except Exception as exc:  # the last line of defence: never a traceback by default
        if os.environ.get("BRIDGE_RULES_DEBUG") == "1":
            raise
        sys.stderr.write(
            f"bridge-rules: internal error: {type(exc).__name__}: {exc}\n"
            "  (set BRIDGE_RULES_DEBUG=1 for a traceback, and please report it)\n"
        )
        return EXIT_INTERNAL
    return 0


def entry() -> NoReturn:
    sys.exit(main())
