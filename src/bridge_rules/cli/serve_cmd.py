"""``bridge-rules serve``: the proxy in front of an anthropic-messages endpoint.

Every option can also come from the environment (``BRIDGE_RULES_UPSTREAM``,
``BRIDGE_RULES_PORT``, ``BRIDGE_RULES_MAX_BODY_BYTES``, ...) or from ``--config FILE``, a
YAML mapping of option names to values; a flag wins over the environment, which wins over
the file.
"""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Optional

import click
import typer

from bridge_rules.cli.app import CommandError, RulesOption, app, fail, rules_error
from bridge_rules.cli.style import paint
from bridge_rules.diagnostics import EXIT_OK
from bridge_rules.proxy.settings import BY_NAME, ENV_PREFIX, SETTINGS, Setting

if TYPE_CHECKING:
    from bridge_rules.diagnostics import Diagnostic
    from bridge_rules.modelrules import ModelTable
    from bridge_rules.proxy.config import ProxyConfig
    from bridge_rules.proxy.routespec import RouteSpec
    from bridge_rules.runtime import Runtime
    from bridge_rules.source import Span

_FILE_WHERE = "bridge_rules.serve.file_where"
_FILE_ROUTES = "bridge_rules.serve.file_routes"
_FILE_PROBLEMS = "bridge_rules.serve.file_problems"
_FILE_ROUTE_MODELS = "bridge_rules.serve.file_route_models"
"""``ctx.meta`` key: where ``--config FILE`` wrote each value it sets."""


def _load_runtime(rules: tuple[str, ...]) -> Runtime:
    """The rules named on the command line, compiled; bad rules stop ``serve`` (exit 2)."""
    from bridge_rules.diagnostics import RulesError
    from bridge_rules.ruleset import load_runtime

    try:
        return load_runtime(list(rules) or None)
    except RulesError as exc:
        rules_error(exc)


def _fixed_models(
    config: ProxyConfig, runtime: Runtime, spans: dict[str, Span]
) -> list[Diagnostic]:
    """BR322 for each route whose ``model:`` fixes a model that refuses a forced
    ``tool_choice`` its rules would send as it is. A route whose rules do not load is left
    to the app, which reports it as before."""
    from bridge_rules.cli.serve_lint import fixed_models
    from bridge_rules.diagnostics import RulesError
    from bridge_rules.ruleset import load_runtime

    def table(spec: RouteSpec) -> ModelTable | None:
        try:
            return (load_runtime(list(spec.rules)) if spec.rules else runtime).rules.models
        except RulesError:
            return None

    return fixed_models(config.routes, spans, table)


def _read_config(ctx: typer.Context, param: Any, value: str | None) -> None:
    """``--config FILE``: option values as the lowest-priority defaults (``ctx.default_map``)."""
    if not value:
        return
    from bridge_rules.proxy.settingsfile import read_settings

    # serve's own settings: not --config itself, nor the root options it also takes.
    own = [p for p in ctx.command.params if p.name and p.expose_value]
    repeats = {p.name: bool(getattr(p, "multiple", False)) for p in own if p.name}
    found = read_settings(value, repeats)
    if found.problems and not found.read:
        raise CommandError(*(problem.line() for problem in found.problems))
    ctx.meta[_FILE_PROBLEMS] = found.problems  # said with the values' own, in one run
    ctx.default_map = {**(ctx.default_map or {}), **found.values}
    ctx.meta[_FILE_WHERE] = found.where  # with each route's place, under route:<name>
    ctx.meta[_FILE_ROUTES] = found.routes
    ctx.meta[_FILE_ROUTE_MODELS] = found.route_models


def _where(ctx: click.Context) -> dict[str, str]:
    """Where each option's value was written, when not as a flag or left to its default: its
    environment variable, or its place in ``--config FILE``."""
    from click.core import ParameterSource

    in_file: dict[str, str] = ctx.meta.get(_FILE_WHERE, {})
    where = {}
    for name in ctx.params:
        source = ctx.get_parameter_source(name)
        if source is ParameterSource.ENVIRONMENT:
            where[name] = BY_NAME[name].env if name in BY_NAME else f"{ENV_PREFIX}_{name.upper()}"
        elif source is ParameterSource.DEFAULT_MAP and name in in_file:
            where[name] = in_file[name]
    return where


def serve(ctx: typer.Context, **params: Any) -> int:
    """Proxy Anthropic Messages traffic, applying the rules both ways.

    Every option also reads BRIDGE_RULES_<OPTION> from the environment (BRIDGE_RULES_UPSTREAM,
    BRIDGE_RULES_PORT, ...). Besides the proxied paths it answers GET /healthz (alive),
    /readyz (rules loaded, with their hash; upstream reachable) and /metrics (Prometheus).
    SIGTERM and SIGINT drain in-flight requests (--drain-timeout) and exit 0; SIGHUP
    reloads the rules, keeping the old ones if the new ones do not load.

    Exit status: 2 for a bad option, rules that do not load or a port that cannot be
    bound.
    """
    from bridge_rules.proxy.config import ServeSettings, SettingProblem, bind_problem
    from bridge_rules.proxy.routespec import ROUTE_WHERE
    from bridge_rules.sealing import ENV_KEY as SEAL_KEY_ENV

    options = {**ctx.params, "routes": ctx.meta.get(_FILE_ROUTES, ())}
    in_file: dict[str, str] = ctx.meta.get(_FILE_WHERE, {})
    places = {k: v for k, v in in_file.items() if k.startswith(ROUTE_WHERE)}
    settings, problems = ServeSettings.check(options, {**_where(ctx), **places})
    in_file_problems = ctx.meta.get(_FILE_PROBLEMS, ())
    if settings is None or in_file_problems:
        raise CommandError(*(problem.line() for problem in (*in_file_problems, *problems)))
    for problem in problems:
        sys.stderr.write(paint(problem.line() + "\n", sys.stderr))
    runtime = _load_runtime(settings.config.rules)  # checked once, before any worker starts
    if runtime.stripping_tools and not os.environ.get(SEAL_KEY_ENV):
        unsealed = SettingProblem(
            f"the rules strip bash pipelines ({', '.join(sorted(runtime.stripping_tools))}), "
            f"but {SEAL_KEY_ENV} is not set: no pipeline is stripped, the agent runs each "
            "command as written (docs/bindings.md)",
            warning=True,
        )
        sys.stderr.write(paint(unsealed.line() + "\n", sys.stderr))
    for finding in _fixed_models(settings.config, runtime, ctx.meta.get(_FILE_ROUTE_MODELS, {})):
        sys.stderr.write(paint(finding.line() + "\n", sys.stderr))
    unbindable = bind_problem(settings.host, settings.port)
    if unbindable is not None:
        fail(unbindable)
    config = _declared_debug_log(settings.config, runtime)
    # The server stack is imported only now, after every check: a bad option answers fast.
    from bridge_rules.diagnostics import RulesError
    from bridge_rules.proxy import tracing
    from bridge_rules.proxy.app import create_app
    from bridge_rules.proxy.ops import with_ops
    from bridge_rules.proxy.server import serve as run

    try:
        proxy = create_app(config, runtime)
        tracing.setup()  # OTEL_* variables ask for traces: the otel extra must be there
    except OSError as exc:
        fail(f"cannot open the debug log: {exc}")
    except RulesError as exc:  # the bindings directory, a route's rules
        rules_error(exc)
    except (ValueError, ImportError) as exc:  # a route's switch, claude-code upstream, otel
        fail(str(exc))
    config = settings.config
    app = with_ops(proxy, config.upstream)  # without --upstream: the default route's
    started = run(
        config,
        app,
        settings.host,
        settings.port,
        settings.workers,
        proxy=proxy,
        grace=settings.drain_timeout,
        watch=params["watch_interval"] if params["watch"] else 0.0,
    )
    if not started:
        fail(f"the server did not start on {settings.host}:{settings.port} (see above)")
    return EXIT_OK


def _option(setting: Setting) -> Any:
    """The typer annotation of one declared setting (its flag, help, metavar, variable)."""
    if setting.shared:
        return RulesOption
    kind: Any = list[setting.type] if setting.repeat else setting.type  # type: ignore[name-defined]
    if setting.default is None:
        kind = Optional[kind]  # noqa: UP045 - typer needs Optional on 3.10
    info = typer.Option(
        *(setting.flags if setting.aliases else ()),  # typer's own (--x/--no-x) otherwise
        help=setting.help,
        metavar=setting.metavar,
        envvar=setting.env,
        min=setting.minimum,
        show_default=setting.default is not None,
    )
    return Annotated[kind, info]


def _declared(command: Callable[..., int]) -> Callable[..., int]:
    """``command`` with one parameter per declared setting (proxy/settings.py), then
    ``--config FILE``: typer reads the options from this signature."""
    keyword = inspect.Parameter.KEYWORD_ONLY
    params = [
        inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context)
    ]
    for setting in SETTINGS:
        params.append(
            inspect.Parameter(
                setting.name, keyword, annotation=_option(setting), default=setting.default
            )
        )
    params.append(inspect.Parameter("config_file", keyword, annotation=_CONFIG, default=None))
    command.__signature__ = inspect.Signature(params, return_annotation=int)  # type: ignore[attr-defined]
    returns = command.__annotations__.get("return", int)  # the function's own
    command.__annotations__ = {p.name: p.annotation for p in params} | {"return": returns}
    return command


_CONFIG = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option(
        "--config",
        help="A YAML file of option values (upstream: URL, port: 8787, ...).",
        metavar="FILE",
        envvar=f"{ENV_PREFIX}_CONFIG",
        callback=_read_config,
        is_eager=True,
        expose_value=False,
    ),
]
app.command("serve", context_settings={"auto_envvar_prefix": ENV_PREFIX})(_declared(serve))


def _declared_debug_log(config: ProxyConfig, runtime: Runtime) -> ProxyConfig:
    """``--debug-log`` wins; without it, the file the rules' ``debug_log.env`` variable names
    (pi-anthropic-messages' ``PI_ANTHROPIC_MESSAGES_DEBUG_LOG``), said on stderr."""
    from dataclasses import replace

    from bridge_rules.debuglog import declared_path

    path = declared_path(runtime.rules.debug_log)
    if config.debug_log is not None or path is None:
        return config
    assert runtime.rules.debug_log is not None  # a declared path implies the setting
    note = f"debug log: {path} (named by {runtime.rules.debug_log.env}, which the rules read)"
    sys.stderr.write(paint(f"bridge-rules: {note}\n", sys.stderr))
    return replace(config, debug_log=path)
