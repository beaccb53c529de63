"""The typer application and the error policy shared by every command.

Exit codes: 0 clean, 1 findings, 2 usage error or unloadable input, 3 internal
error (130 on Ctrl-C). A user never sees a traceback unless ``BRIDGE_RULES_DEBUG=1``.

A command returns its exit code. A problem that stops it before it can (a file that
cannot be read, rules that do not load) is raised as a :class:`CommandError` carrying
its lines and code, as pre-commit's ``FatalError`` is. ``_Commands.invoke`` is the one
place that turns either into the command's status; :func:`main` adds typer's own usage
errors (2), Ctrl-C and bugs (3), and :func:`entry` is the one place the process exits.
Command modules import their heavy dependencies
inside the command body so ``bridge-rules --help`` stays fast.
"""

from __future__ import annotations

import functools
import os
import sys
from typing import Annotated, Any, NoReturn, Optional

import click
import typer
import typer.core
import typer.main

from bridge_rules.cli.style import Color, paint, set_mode
from bridge_rules.diagnostics import EXIT_INTERNAL, EXIT_USAGE
from bridge_rules.proxy.settings import BY_NAME

EXIT_INTERRUPTED = 130


class CommandError(Exception):
    """Why a command stopped: the lines to print to stderr, as they are, and the exit code.
    Raised where no value can be returned (a helper deep in a command); only
    ``_Commands.invoke`` prints it."""

    def __init__(self, *lines: str, code: int = EXIT_USAGE) -> None:
        super().__init__(*lines)
        self.lines = lines
        self.code = code


class Group(typer.core.TyperGroup):
    """A command group that says "did you mean" once: click 8.2 and later suggest a close
    command name themselves, and typer added the same suggestion again."""

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        try:
            return click.Group.resolve_command(self, ctx, args)
        except click.UsageError as exc:
            if getattr(exc, "possibilities", None):  # click's own suggestion is in it
                raise
        return super().resolve_command(ctx, args)  # typer's, for an older click


# Options of the root that a user may also give after the command name
# (`bridge-rules lint --pins DIR`); each command gets a copy (see `_Commands`).
_ROOT_AFTER = ("color", "pins", "allow_outside")


def _root_after(ctx: click.Context, param: click.Parameter, value: Any) -> None:
    """Apply a root option given after the command, on top of the root's own: a later
    ``--color`` wins; ``--pins`` directories follow those given before the command."""
    from bridge_rules.outside import set_allow_outside
    from bridge_rules.pins import use_dirs

    if not value:
        return
    if param.name == "color":
        set_mode(getattr(value, "value", value))
    elif param.name == "pins":
        use_dirs([*(ctx.find_root().params.get("pins") or ()), *value])
    elif param.name == "allow_outside":
        set_allow_outside(True)


def _again(option: click.Option) -> click.Option:
    """A copy of the root's ``option`` to add to a command's own: the same names, type and
    help, applied by ``_root_after``, and never read from the command's environment variables
    (``serve`` reads ``BRIDGE_RULES_<OPTION>`` for its own options only)."""
    return click.Option(
        option.opts,
        type=option.type,
        multiple=option.multiple,
        is_flag=option.is_flag,
        default=False if option.is_flag else None,
        help=option.help,
        callback=_root_after,
        expose_value=False,
        allow_from_autoenv=False,
    )


def _leaves(group: click.Group) -> list[click.Command]:
    found: list[click.Command] = []
    for command in group.commands.values():
        found += _leaves(command) if isinstance(command, click.Group) else [command]
    return found


class _Commands(Group):
    """The root command group: the one place a command's outcome becomes its exit status,
    however it is run (:func:`main`, or a test's ``CliRunner`` over ``app``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        after = [p for p in self.params if isinstance(p, click.Option) and p.name in _ROOT_AFTER]
        for command in _leaves(self):
            taken = {name for param in command.params for name in param.opts}
            command.params += [_again(p) for p in after if not taken & set(p.opts)]

    def invoke(self, ctx: click.Context) -> Any:
        try:
            status = super().invoke(ctx)
        except CommandError as exc:
            for line in exc.lines:
                sys.stderr.write(paint(line + "\n", sys.stderr))
            status = exc.code
        if not isinstance(status, int):  # a command that forgot its status is a bug
            raise TypeError(f"the command returned {status!r}, not an exit status")
        ctx.exit(status)


app = typer.Typer(
    cls=_Commands,
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
RULES = BY_NAME["rules"]
"""``--rules``, which every command takes: declared with serve's settings (proxy/settings.py)."""
RulesOption = Annotated[
    Optional[list[str]],  # noqa: UP045 - typer needs Optional on 3.10
    typer.Option(
        "--rules",
        "-r",
        help=RULES.help,
        metavar=RULES.metavar,
    ),
]


def fail(*messages: str, code: int = EXIT_USAGE) -> NoReturn:
    """Stop the command with ``bridge-rules: error: message`` (a line each) and ``code``."""
    raise CommandError(*(f"bridge-rules: error: {message}" for message in messages), code=code)


def warn(message: str) -> None:
    """Print ``bridge-rules: warning: message`` to stderr."""
    sys.stderr.write(paint(f"bridge-rules: warning: {message}\n", sys.stderr))


def rules_error(exc: Exception) -> NoReturn:
    """Stop with every diagnostic of a RulesError, one line each (exit 2)."""
    raise CommandError(*(diag.line() for diag in getattr(exc, "diagnostics", []))) from None


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
        rules_error(exc)


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
    "keys_cmd",
    "lsp_cmd",
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
    """Run one command and return its exit status: the command's own (see ``_Commands``), 2
    for typer's usage errors, 130 on Ctrl-C, 3 for a bug."""
    from bridge_rules.outside import set_allow_outside

    command = click_command()
    try:
        status = command.main(args=argv, prog_name="bridge-rules", standalone_mode=False)
    except click.ClickException as exc:  # unknown option, missing value, bad choice
        exc.show()
        return exc.exit_code
    except (click.Abort, KeyboardInterrupt):
        sys.stderr.write("bridge-rules: interrupted\n")
        return EXIT_INTERRUPTED
    except SystemExit as exc:  # shell completion, and click on a closed pipe, exit themselves
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else EXIT_USAGE)
    except Exception as exc:  # the last line of defence: never a traceback by default
        if os.environ.get("BRIDGE_RULES_DEBUG") == "1":
            raise
        return _internal(exc)
    finally:
        # ``--allow-outside`` holds for its own run only, also when a library caller or a
        # test runs several commands in one process (the next ``load()`` is not a run).
        set_allow_outside(False)
    return int(status or 0)  # click.exceptions.Exit's code: -h, --version, a command's


def _internal(exc: Exception) -> int:
    sys.stderr.write(
        f"bridge-rules: internal error: {type(exc).__name__}: {exc}\n"
        "  (set BRIDGE_RULES_DEBUG=1 for a traceback, and please report it)\n"
    )
    return EXIT_INTERNAL


def entry() -> NoReturn:
    """The ``bridge-rules`` console script: the only place the process exits."""
    sys.exit(main())
