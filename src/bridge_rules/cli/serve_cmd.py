"""``bridge-rules serve``: the proxy in front of an anthropic-messages endpoint."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from bridge_rules.cli.app import RulesOption, app, fail, print_rules_error

if TYPE_CHECKING:
    from bridge_rules.runtime import Runtime

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
    if options["max_sse_event_bytes"] < 1:
        fail("--max-sse-event-bytes must be at least 1")
    for name in ("timeout", "body_timeout"):
        if options[name] <= 0:
            fail(f"--{name.replace('_', '-')} must be positive")


@app.command()
def serve(  # noqa: PLR0917 - one parameter per CLI option
    upstream: Annotated[
        str,
        typer.Option(
            help="The anthropic-messages endpoint to forward to, e.g. "
            "https://api.anthropic.com (without /v1)."
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
    debug_log: Annotated[
        Optional[str],  # noqa: UP045 - typer needs Optional on 3.10
        typer.Option(help="Append a JSON line per request (credentials redacted) to this file."),
    ] = None,
    log_prompts: Annotated[
        bool, typer.Option(help="Put prompt and response text in the debug log too.")
    ] = False,
) -> None:
    """Proxy Anthropic Messages traffic, applying the rules both ways."""
    from urllib.parse import urlsplit

    from bridge_rules.proxy import ProxyConfig, create_app
    from bridge_rules.proxy.server import serve as run

    parts = urlsplit(upstream)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        fail(f"--upstream must be an http(s) URL, got '{upstream}'")
    _check(locals())
    if log_prompts and not debug_log:
        fail("--log-prompts only applies with --debug-log FILE")
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
    )
    try:
        proxy = create_app(config, runtime)
    except OSError as exc:
        fail(f"cannot open the debug log: {exc}")
    run(config, proxy, host, port, workers)
