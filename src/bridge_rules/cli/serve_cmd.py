"""``bridge-rules serve``: the proxy in front of an anthropic-messages endpoint."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from bridge_rules.cli.app import RulesOption, app, fail, load_engine


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
    max_body_bytes: Annotated[int, typer.Option(help="Larger request bodies get 413.")] = 32
    * 1024
    * 1024,
    timeout: Annotated[
        float, typer.Option(help="Seconds the upstream may stay silent before the request fails.")
    ] = 600.0,
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
    if workers < 1:
        fail("--workers must be at least 1")
    if max_body_bytes < 1:
        fail("--max-body-bytes must be positive")
    if timeout <= 0:
        fail("--timeout must be positive")
    if log_prompts and not debug_log:
        fail("--log-prompts only applies with --debug-log FILE")
    engine = load_engine(rules)  # validates the rules once, before any worker starts
    config = ProxyConfig(
        upstream=upstream,
        rules=tuple(rules or ()),
        max_body_bytes=max_body_bytes,
        timeout=timeout,
        debug_log=debug_log,
        log_prompts=log_prompts,
    )
    try:
        proxy = create_app(config, engine)
    except OSError as exc:
        fail(f"cannot open the debug log: {exc}")
    run(config, proxy, host, port, workers)
