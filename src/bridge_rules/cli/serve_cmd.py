"""``bridge-rules serve``: the proxy in front of an anthropic-messages endpoint.

Every option can also come from the environment (``BRIDGE_RULES_UPSTREAM``,
``BRIDGE_RULES_PORT``, ``BRIDGE_RULES_MAX_BODY_BYTES``, ...) or from ``--config FILE``, a
YAML mapping of option names to values; a flag wins over the environment, which wins over
the file.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Annotated, Any, Optional

import click
import typer

from bridge_rules.cli.app import CommandError, RulesOption, app, fail, rules_error
from bridge_rules.cli.style import paint
from bridge_rules.diagnostics import EXIT_OK

if TYPE_CHECKING:
    from bridge_rules.proxy.config import ProxyConfig
    from bridge_rules.runtime import Runtime

ENV_PREFIX = "BRIDGE_RULES"
MiB = 1024 * 1024
_FILE_WHERE = "bridge_rules.serve.file_where"
_FILE_ROUTES = "bridge_rules.serve.file_routes"
"""``ctx.meta`` key: where ``--config FILE`` wrote each value it sets."""


def _load_runtime(rules: tuple[str, ...]) -> Runtime:
    """The rules named on the command line, compiled; bad rules stop ``serve`` (exit 2)."""
    from bridge_rules.diagnostics import RulesError
    from bridge_rules.ruleset import load_runtime

    try:
        return load_runtime(list(rules) or None)
    except RulesError as exc:
        rules_error(exc)


def _read_config(ctx: typer.Context, param: Any, value: str | None) -> None:
    """``--config FILE``: option values as the lowest-priority defaults (``ctx.default_map``)."""
    if not value:
        return
    from bridge_rules.proxy.settingsfile import read_settings

    # serve's own settings: not --config itself, nor the root options it also takes.
    own = [p for p in ctx.command.params if p.name and p.expose_value]
    repeats = {p.name: bool(getattr(p, "multiple", False)) for p in own if p.name}
    found = read_settings(value, repeats)
    if found.problems:
        raise CommandError(*(problem.line() for problem in found.problems))
    ctx.default_map = {**(ctx.default_map or {}), **found.values}
    ctx.meta[_FILE_WHERE] = found.where  # with each route's place, under route:<name>
    ctx.meta[_FILE_ROUTES] = found.routes


def _where(ctx: click.Context) -> dict[str, str]:
    """Where each option's value was written, when not as a flag or left to its default: its
    environment variable, or its place in ``--config FILE``."""
    from click.core import ParameterSource

    in_file: dict[str, str] = ctx.meta.get(_FILE_WHERE, {})
    where = {}
    for name in ctx.params:
        source = ctx.get_parameter_source(name)
        if source is ParameterSource.ENVIRONMENT:
            where[name] = f"{ctx.auto_envvar_prefix}_{name.upper()}"
        elif source is ParameterSource.DEFAULT_MAP and name in in_file:
            where[name] = in_file[name]
    return where


@app.command(context_settings={"auto_envvar_prefix": ENV_PREFIX})
def serve(  # noqa: PLR0917 - one parameter per CLI option
    ctx: typer.Context,
    upstream: Annotated[
        Optional[str],  # noqa: UP045 - typer needs Optional on 3.10
        typer.Option(
            help="The anthropic-messages endpoint to forward to, e.g. "
            "https://api.anthropic.com (without /v1), or claude-code to answer with the "
            "Claude Code CLI (docs/claude-code-upstream.md). Required unless every route "
            "of --config names its own.",
            show_default=False,
        ),
    ] = None,
    rules: RulesOption = None,
    host: Annotated[str, typer.Option(help="Interface to bind; loopback unless you say so.")] = (
        "127.0.0.1"
    ),
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8787,
    allow_origin: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Option(
            help="A web origin (https://app.example:443) whose requests are served; "
            "repeatable, * for any. A request with any other Origin header gets 403, so a web "
            "page cannot reach serve (docs/proxy.md#browsers). Default: none.",
            metavar="ORIGIN",
        ),
    ] = None,
    allow_host: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Option(
            help="A Host name served besides the listen address, localhost and loopback "
            "addresses; repeatable, * for any. Any other Host gets 403 (DNS rebinding). With "
            "--host 0.0.0.0, IP addresses are served too.",
            metavar="NAME",
        ),
    ] = None,
    workers: Annotated[
        int, typer.Option(help="Worker processes (the proxy is stateless; see docs/proxy.md).")
    ] = 1,
    max_body_bytes: Annotated[int, typer.Option(help="Larger request bodies get 413.")] = 32 * MiB,
    timeout: Annotated[
        float, typer.Option(help="Seconds the upstream may stay silent before the request fails.")
    ] = 600.0,
    max_headers: Annotated[
        int, typer.Option(help="Requests with more headers than this get 431.")
    ] = 100,
    max_header_bytes: Annotated[
        int, typer.Option(help="Requests whose header names and values exceed this get 431.")
    ] = 64 * 1024,
    body_timeout: Annotated[
        float, typer.Option(help="Seconds a client has to send its whole request body, else 408.")
    ] = 60.0,
    header_timeout: Annotated[
        float,
        typer.Option(
            help="Seconds a client has to send a request's headers once it has started (or "
            "its first request once connected), else 408 and the connection is closed.",
            metavar="SECONDS",
        ),
    ] = 10.0,
    max_connections: Annotated[
        int,
        typer.Option(
            help="Client connections one worker holds; past it the connection waiting "
            "longest for its headers (or idle) is closed for the new one, else the new one "
            "gets 503. 0: as many as the open-file limit allows for two descriptors each.",
        ),
    ] = 0,
    max_response_bytes: Annotated[
        int,
        typer.Option(
            help="A JSON answer the proxy must rewrite that is larger than this (decoded) gets 502."
        ),
    ] = 32 * MiB,
    max_sse_event_bytes: Annotated[
        int,
        typer.Option(
            help="A rewritten stream whose current event grows past this is closed with an "
            "error event."
        ),
    ] = 16 * MiB,
    outbound_cache_mb: Annotated[
        int,
        typer.Option(
            help="Megabytes of rewritten messages kept per worker, so a request that resends "
            "the conversation only rewrites its new messages; 0 turns the cache off.",
            metavar="MB",
        ),
    ] = 64,
    upstream_keepalive: Annotated[
        float,
        typer.Option(
            help="Seconds an idle connection to the upstream is kept for reuse; keep it below "
            "the upstream's own idle timeout (Node and uvicorn close after 5 s). 0: a new "
            "connection per request.",
            metavar="SECONDS",
        ),
    ] = 30.0,
    bindings_dir: Annotated[
        Optional[str],  # noqa: UP045 - typer needs Optional on 3.10
        typer.Option(
            help="A directory of YAML files of bindings laid over the rules (one origin per "
            "file), read at start and again on reload; see docs/bindings.md.",
            metavar="DIR",
        ),
    ] = None,
    shutdown_grace: Annotated[
        float,
        typer.Option(
            help="Seconds SIGTERM or SIGINT lets in-flight requests finish before they are cut; "
            "serve then exits 0.",
            metavar="SECONDS",
        ),
    ] = 30.0,
    debug_log: Annotated[
        Optional[str],  # noqa: UP045 - typer needs Optional on 3.10
        typer.Option(help="Append a JSON line per request (credentials redacted) to this file."),
    ] = None,
    log_prompts: Annotated[
        bool, typer.Option(help="Put prompt and response text in the debug log too.")
    ] = False,
    claude_path: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(help="With --upstream claude-code: the CLI binary (default: the SDK's own)."),
    ] = None,
    max_sessions: Annotated[
        int, typer.Option(help="With --upstream claude-code: CLI processes at once; more get 429.")
    ] = 4,
    claude_allow: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Option(
            help="With --upstream claude-code: a tool the CLI may run itself (a pattern such "
            "as WebSearch or mcp__github__*); repeatable. Default: none.",
            metavar="TOOL",
        ),
    ] = None,
    claude_mcp_config: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(help="With --upstream claude-code: a JSON file of your own MCP servers."),
    ] = None,
    claude_max_turns: Annotated[
        int,
        typer.Option(help="With --upstream claude-code: messages a request may replay; more: 413."),
    ] = 1000,
    claude_max_bytes: Annotated[
        int,
        typer.Option(help="With --upstream claude-code: the largest request body; larger: 413."),
    ] = 16 * 1024 * 1024,
    claude_max_time: Annotated[
        float,
        typer.Option(
            help="With --upstream claude-code: seconds one request may hold a CLI session; "
            "past it, 413 while its history is replayed, else 504."
        ),
    ] = 1800.0,
    watch: Annotated[
        bool,
        typer.Option(
            help="Reload the rules by themselves when their files change (a ConfigMap the "
            "kubelet swaps), as on SIGHUP; see docs/deploy.md.",
        ),
    ] = False,
    watch_interval: Annotated[
        float,
        typer.Option(
            help="With --watch: seconds between two looks at the rule files.",
            metavar="SECONDS",
            min=0.05,
        ),
    ] = 1.0,
    config_file: Annotated[
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
    ] = None,
) -> int:
    """Proxy Anthropic Messages traffic, applying the rules both ways.

    Every option also reads BRIDGE_RULES_<OPTION> from the environment (BRIDGE_RULES_UPSTREAM,
    BRIDGE_RULES_PORT, ...). Besides the proxied paths it answers GET /healthz (alive),
    /readyz (rules loaded, with their hash; upstream reachable) and /metrics (Prometheus).
    SIGTERM and SIGINT drain in-flight requests (--shutdown-grace) and exit 0; SIGHUP
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
    if settings is None:
        raise CommandError(*(problem.line() for problem in problems))
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
        grace=settings.shutdown_grace,
        watch=watch_interval if watch else 0.0,
    )
    if not started:
        fail(f"the server did not start on {settings.host}:{settings.port} (see above)")
    return EXIT_OK


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
