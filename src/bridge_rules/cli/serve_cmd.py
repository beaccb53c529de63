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

import typer

from bridge_rules.cli.app import RulesOption, app, fail, print_rules_error, warn
from bridge_rules.diagnostics import EXIT_USAGE

if TYPE_CHECKING:
    from bridge_rules.runtime import Runtime

ENV_PREFIX = "BRIDGE_RULES"
MiB = 1024 * 1024


def _load_runtime(rules: list[str] | None) -> Runtime:
    """The rules named on the command line, compiled; bad rules exit 2."""
    from bridge_rules.diagnostics import RulesError
    from bridge_rules.ruleset import load_runtime

    try:
        return load_runtime(list(rules) if rules else None)
    except RulesError as exc:
        print_rules_error(exc)


def _check(options: dict[str, Any]) -> None:
    """Exit 2 with one line for the first option out of range."""
    for name in ("workers", "max_body_bytes", "max_headers", "max_header_bytes"):
        if options[name] < 1:
            fail(f"--{name.replace('_', '-')} must be at least 1")
    if options["outbound_cache_mb"] < 0:
        fail("--outbound-cache-mb must be 0 (off) or more")
    if options["upstream_keepalive"] < 0:
        fail("--upstream-keepalive must be 0 (no reuse) or more")
    if options["max_sse_event_bytes"] < 1:
        fail("--max-sse-event-bytes must be at least 1")
    for name in ("timeout", "body_timeout"):
        if options[name] <= 0:
            fail(f"--{name.replace('_', '-')} must be positive")


def _check_claude_code(max_sessions: int, mcp_config: str | None) -> None:
    """Exit 2 when ``--upstream claude-code`` cannot work: no SDK, no sessions, or an MCP
    config file that cannot be used."""
    import importlib.util

    from bridge_rules.proxy.claude_code import MISSING_SDK, read_mcp_config

    if importlib.util.find_spec("claude_agent_sdk") is None:
        fail(MISSING_SDK)
    if max_sessions < 1:
        fail("--max-sessions must be at least 1")
    if mcp_config:
        try:
            read_mcp_config(mcp_config)
        except ValueError as exc:
            fail(f"--claude-mcp-config: {exc}")


def _read_config(ctx: typer.Context, param: Any, value: str | None) -> None:
    """``--config FILE``: option values as the lowest-priority defaults (``ctx.default_map``)."""
    if not value:
        return
    from pathlib import Path

    from bridge_rules.cli.style import paint
    from bridge_rules.diagnostics import Severity, did_you_mean
    from bridge_rules.loader import read_file

    doc, diags = read_file(Path(value))  # the rule files' safe, size-limited YAML reader
    errors = [d for d in diags if d.severity is Severity.ERROR]
    codes = {d.code for d in errors}
    if codes == {"BR005"}:  # an empty file (or only comments): no settings
        return
    if "BR001" in codes:
        fail(f"--config {value}: no such file")
    if "BR006" in codes:
        fail(f"--config {value}: must be a mapping of option names to values (upstream: URL)")
    if doc is None or errors:
        for diag in errors:  # YAML syntax and size: located, like a rule file's
            sys.stderr.write(paint(diag.line() + "\n", sys.stderr))
        raise typer.Exit(EXIT_USAGE)
    settings = doc.data
    names = {p.name: p for p in ctx.command.params if p.name and p.name != "config_file"}
    known = sorted(n.replace("_", "-") for n in names)
    defaults: dict[str, Any] = {}
    for key, setting in settings.items():
        name = str(key).replace("-", "_")
        if name not in names:
            hint = did_you_mean(str(key), known) or f"known: {', '.join(known)}"
            fail(f"--config {value}: unknown option '{key}'; {hint}")
        defaults[name] = _setting(value, str(key), setting, multiple=names[name].multiple)
    ctx.default_map = {**(ctx.default_map or {}), **defaults}


def _setting(path: str, key: str, setting: Any, multiple: bool) -> Any:
    """A value from the file as the option takes it: a scalar, or for a repeatable option
    (``rules``) a scalar or a list of them; anything else exits 2 (never a TypeError later)."""
    scalar = (str, int, float, bool)
    if isinstance(setting, scalar):
        return [setting] if multiple else setting
    if multiple and isinstance(setting, list) and all(isinstance(v, scalar) for v in setting):
        return setting
    shape = "a list of values" if multiple else "one value"
    return fail(f"--config {path}: '{key}' takes {shape}, got {type(setting).__name__}")


@app.command(context_settings={"auto_envvar_prefix": ENV_PREFIX})
def serve(  # noqa: PLR0917 - one parameter per CLI option
    upstream: Annotated[
        str,
        typer.Option(
            help="The anthropic-messages endpoint to forward to, e.g. "
            "https://api.anthropic.com (without /v1), or claude-code to answer with the "
            "Claude Code CLI (docs/claude-code-upstream.md)."
        ),
    ],
    rules: RulesOption = None,
    host: Annotated[str, typer.Option(help="Interface to bind; loopback unless you say so.")] = (
        "127.0.0.1"
    ),
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8787,
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
) -> None:
    """Proxy Anthropic Messages traffic, applying the rules both ways.

    Every option also reads BRIDGE_RULES_<OPTION> from the environment (BRIDGE_RULES_UPSTREAM,
    BRIDGE_RULES_PORT, ...). Besides the proxied paths it answers GET /healthz (alive),
    /readyz (rules loaded, upstream reachable) and /metrics (Prometheus).

    Exit status: 2 for a bad option, rules that do not load or a port that cannot be
    bound.
    """
    from urllib.parse import urlsplit

    from bridge_rules.proxy.config import (
        CLAUDE_CODE,
        MULTIPROC_ENV,
        ProxyConfig,
        bind_problem,
        normalise_upstream,
    )

    parts = urlsplit(upstream)
    if upstream == CLAUDE_CODE:
        _check_claude_code(max_sessions, claude_mcp_config)
    elif parts.scheme not in ("http", "https") or not parts.netloc:
        fail(f"--upstream must be an http(s) URL, got '{upstream}'")
    if parts.query or parts.fragment:
        fail(f"--upstream takes no query string or fragment, got '{upstream}'")
    upstream, notice = normalise_upstream(upstream) if upstream != CLAUDE_CODE else (upstream, None)
    if notice is not None:
        warn(notice)
    _check(locals())
    if log_prompts and not debug_log:
        fail("--log-prompts only applies with --debug-log FILE")
    shared = os.environ.get(MULTIPROC_ENV)
    if shared and not os.path.isdir(shared):  # prometheus-client would fail on first use
        fail(
            f"{MULTIPROC_ENV}={shared} is not a directory; create it, or unset it "
            "(with --workers N, serve then makes a temporary one)"
        )
    runtime = _load_runtime(rules)  # validates the rules once, before any worker starts
    config = ProxyConfig(
        upstream=upstream,
        rules=tuple(rules or ()),
        max_body_bytes=max_body_bytes,
        timeout=timeout,
        debug_log=debug_log,
        log_prompts=log_prompts,
        max_headers=max_headers,
        max_header_bytes=max_header_bytes,
        body_timeout=body_timeout,
        max_sse_event_bytes=max_sse_event_bytes,
        outbound_cache_mb=outbound_cache_mb,
        upstream_keepalive=upstream_keepalive,
        claude_path=claude_path,
        max_sessions=max_sessions,
        claude_allow=tuple(claude_allow or ()),
        claude_mcp_config=claude_mcp_config,
    )
    problem = bind_problem(host, port)
    if problem is not None:
        fail(problem)
    # The server stack is imported only now, after every check: a bad option answers fast.
    from bridge_rules.proxy.app import create_app
    from bridge_rules.proxy.ops import with_ops
    from bridge_rules.proxy.server import serve as run

    try:
        proxy = create_app(config, runtime)
    except OSError as exc:
        fail(f"cannot open the debug log: {exc}")
    run(config, with_ops(proxy, upstream), host, port, workers)
