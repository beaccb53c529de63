"""The proxy as a plain ASGI app: read, rewrite (an Engine's turn), forward, rewrite back.

Stateless by design: each request gets its own :class:`~bridge_rules.transform.turn.Turn`
from the same :class:`~bridge_rules.Engine` a library caller uses. The gate decision
comes from the request's own ``model``, the reverse name map from its own ``tools[]``,
and what a repair changed in a call from the call's sealed id, so any worker of any
replica gives the same answer. All name and argument logic lives below the engine;
this module only moves bytes and faults. The paths it answers itself and the ones it
rewrites come from the route table (``proxy.endpoints``); everything else is forwarded.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

from bridge_rules import jsonio
from bridge_rules.debuglog import DebugLog, omit_text
from bridge_rules.engine import Engine, Runtime, Sealer, load
from bridge_rules.gcpause import tune_for_serving
from bridge_rules.proxy import endpoints, models_list, paths, tracing
from bridge_rules.proxy.body import (
    ClientGone,
    check_headers,
    read_body,
)
from bridge_rules.proxy.browsers import BrowserRules
from bridge_rules.proxy.config import ProxyConfig
from bridge_rules.proxy.disconnect import until_disconnect
from bridge_rules.proxy.errors import ProxyError, UpstreamAborted
from bridge_rules.proxy.forward import Exchange
from bridge_rules.proxy.headers import expectation
from bridge_rules.proxy.heap import HeapTrimmer
from bridge_rules.proxy.keyguard import KeyGuard, check_policies
from bridge_rules.proxy.kinds import open_upstream
from bridge_rules.proxy.obs import AccessRecord, configure_logging, flush_access_log
from bridge_rules.proxy.ops import OpsApp, with_ops
from bridge_rules.proxy.outbound import rewrite_request
from bridge_rules.proxy.reply import JSON, Message, Receive, Reply, Send
from bridge_rules.proxy.routes import Router, policy_on

log = logging.getLogger("bridge_rules.proxy")

OFF_LOOP_BYTES = 256 * 1024
"""A request body this large is rewritten in a worker thread, not on the event loop: its
parse, schema conversion and history walk take milliseconds to seconds, and meanwhile the
loop must go on answering the worker's other requests (the interpreter hands it the lock
every switch interval, 5 ms). A smaller body is rewritten in place: the thread hop would
cost more than the rewrite."""
HEALTH = jsonio.dumps({"status": "ok"})
SERVER_OPTIONS = [(b"allow", b"GET, HEAD, POST, OPTIONS"), (b"content-length", b"0")]

Route = Callable[[Exchange], Awaitable[None]]


async def healthz(ex: Exchange) -> None:
    await ex.reply.full(200, [(b"content-type", JSON)], HEALTH)


class ProxyApp:
    def __init__(self, engine: Engine, config: ProxyConfig) -> None:
        self.config = config
        self.cache_on = config.outbound_cache_mb > 0
        self.rules = engine
        """The rule files' engine; :attr:`engine` adds the bindings directory to it."""
        self.engine = self._with_bindings(engine)
        self.upstream = open_upstream(config)
        """What ``config.upstream`` names, opened by its kind (``proxy.kinds``)."""
        self.debug = DebugLog(config.debug_log, config.log_prompts) if config.debug_log else None
        self.heap = HeapTrimmer.from_env()  # gives a large burst's heap back afterwards
        self.router = (
            Router(config, config.routes, build_engine, size_cache) if config.routes else None
        )
        self.browsers = BrowserRules.of(
            config.listen_host, config.allow_origins, config.allow_hosts
        )
        """Web pages' requests refused (``proxy.browsers``); :class:`OpsApp` asks it too."""
        self._draining = False
        self.keys = KeyGuard.of(config, self._check_key_policies)
        """Client keys and their limits (``proxy.keyguard``); None without ``--keys``."""
        self.routes: dict[tuple[str, str], Route] = endpoints.dispatch({"healthz": healthz})
        """The endpoints this app answers itself (``proxy.endpoints``; ``OpsApp`` the rest)."""

    @property
    def draining(self) -> bool:
        """Set by SIGTERM/SIGINT (``proxy.lifecycle``): ``/readyz`` answers 503 from then on,
        and upstreams that keep processes ahead of requests (``--claude-spares``) end them
        now rather than after the drain."""
        return self._draining

    @draining.setter
    def draining(self, value: bool) -> None:
        if value and not self._draining:
            upstreams = [self.upstream]
            if self.router is not None:
                upstreams += [route.upstream for route in self.router.routes.values()]
            for upstream in upstreams:
                drain = getattr(upstream, "drain", None)
                if drain is not None:
                    with contextlib.suppress(RuntimeError):  # no loop: nothing runs ahead
                        # set from a signal handler: the loop runs it at its next turn
                        asyncio.get_running_loop().call_soon_threadsafe(drain)
        self._draining = value

    def _with_bindings(self, engine: Engine) -> Engine:
        """``engine`` with ``--bindings-dir`` read over it, its message cache as configured.
        Raises :class:`~bridge_rules.RulesError` when a binding there is refused."""
        folder = self.config.bindings_dir
        if folder:
            engine = engine.with_bindings(Path(folder))
        size_cache(engine, self.config)
        return engine

    def use_rules(self, engine: Engine) -> None:
        """Serve these rules, with the bindings directory read again over them, from the
        next request on (a request already running keeps the engine it started with).
        On a :class:`~bridge_rules.RulesError` nothing changes."""
        served = self._with_bindings(engine)
        self.rules, self.engine = engine, served

    def reload_routes(self) -> list[str]:
        """Every route's rules read again; a route whose rules fail keeps its old ones and
        says so on ``/readyz``. Returns the routes that failed."""
        if self.router is None:
            return []
        return self.router.apply(self.router.rebuild())

    @property
    def routes_status(self) -> dict[str, Any] | None:
        """Each route's rules hash, and why its last reload failed (``/readyz``)."""
        return None if self.router is None else self.router.status()

    def _check_key_policies(self, policies: list[tuple[str, tuple[str, ...]]]) -> None:
        """Each key's routes and switches checked against the rules served (``ValueError``)."""
        routes = {} if self.router is None else self.router.routes
        runtimes = {name: route.engine.runtime for name, route in routes.items()}
        check_policies(policies, runtimes, self.engine.runtime)

    def reload_bindings(self) -> None:
        """Read the bindings directory again over the same rules (:meth:`use_rules`)."""
        self.use_rules(self.rules)

    async def readiness(self) -> str | None:
        """Why the upstream cannot answer now (``/readyz``), or None."""
        return await self.upstream.readiness()

    @property
    def rules_hash(self) -> str:
        """The hash of the rules this app answers with now (``/readyz``, the start line)."""
        return self.engine.runtime.rules.digest

    async def aclose(self) -> None:
        self.heap.close()
        flush_access_log()
        await self.upstream.aclose()
        if self.router is not None:
            await self.router.aclose()
        if self.debug is not None:
            self.debug.close()
        if self.keys is not None:
            self.keys.close()

    async def __call__(self, scope: Message, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await self._http(scope, receive, send)
        elif scope["type"] == "lifespan":
            await self._lifespan(receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            msg = await receive()
            if msg["type"] == "lifespan.startup":
                self.upstream.prepare()
                await send({"type": "lifespan.startup.complete"})
            elif msg["type"] == "lifespan.shutdown":
                await self.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _http(self, scope: Message, receive: Receive, send: Send) -> None:
        record = AccessRecord(scope["method"], scope["path"])
        reply = Reply(send, record)
        ex = Exchange(scope, b"", reply, self.debug)
        try:
            await self._handle(ex, receive)
        except ProxyError as exc:
            record.error = exc.error_type
            if reply.started:
                raise UpstreamAborted(exc.message) from None
            await reply.error(exc.status, exc.message, close=exc.close, extra=exc.headers)
        except ClientGone:
            record.status, record.error = 499, "client_disconnected"
        except UpstreamAborted as exc:
            record.error = "upstream_aborted"
            log.warning("upstream failed mid-response on %s: %s", record.path, exc)
            raise
        except Exception as exc:  # a bug must not reach the client as a traceback
            record.error = "internal_error"
            log.error("internal error on %s: %s: %s", record.path, type(exc).__name__, exc)
            if os.environ.get("BRIDGE_RULES_DEBUG") == "1":
                log.exception("traceback")
            if reply.started:
                raise UpstreamAborted(str(exc)) from None
            await reply.error(500, f"bridge-rules proxy internal error ({type(exc).__name__})")
        finally:
            record.emit()
            self.heap.finished(record.bytes_in, record.bytes_out)
            if self.debug is not None:
                self.debug.write(ex.debug_record())

    async def _handle(self, ex: Exchange, receive: Receive) -> None:
        scope, config = ex.scope, self.config
        check_headers(scope, config.max_headers, config.max_header_bytes)
        refused = self.browsers.refusal(scope["headers"])
        if refused is not None:
            raise ProxyError(403, refused)
        method, path = scope["method"], scope["path"]
        if not path.startswith("/"):
            await _asterisk(ex, method)
            return
        unmet = expectation(scope["headers"])
        if unmet is not None:
            shown = unmet.decode("latin-1")[:64]
            raise ProxyError(417, f"this proxy meets no expectation but 100-continue: {shown!r}")
        route = self.routes.get((method, path))
        if route is not None:
            await route(ex)
            return
        caller = None if self.keys is None else self.keys.identify(ex)  # before the body
        ex.body = await read_body(scope, receive, config.max_body_bytes, config.body_timeout)
        ex.reply.record.bytes_in = len(ex.body)
        engine, upstream = self.engine, self.upstream
        if self.router is not None:  # serve --config with routes: (docs/proxy.md#routes)
            engine, upstream = self.router.pick(ex, caller, config.route_choice)
        # a kind written before models_from_rules existed forwards the path, as it did
        if getattr(upstream, "models_from_rules", False) and models_list.is_models_path(
            method, paths.canonical(ex.scope["path"])
        ):
            # an upstream with no Models API (Claude Code): the route's rules say what it offers
            await models_list.answer(ex, engine.model_table, await upstream.offered())
            return
        self._match_path(ex, engine)
        rewritten = (method, ex.scope["path"]) in endpoints.REWRITTEN_CALLS
        limited: AbstractContextManager[None] = nullcontext()
        if caller is not None and self.keys is not None:  # before any work is spent on it
            session = upstream.holds_session(rewritten)
            limited = self.keys.limited(caller, ex.reply.record, session)
        with limited:
            if rewritten:
                with tracing.child("bridge_rules.rewrite", **tracing.rules(engine)):
                    if len(ex.body) >= OFF_LOOP_BYTES:
                        await asyncio.to_thread(
                            rewrite_request, ex, engine, self.debug, self.cache_on
                        )
                    else:
                        rewrite_request(ex, engine, self.debug, self.cache_on)
            await until_disconnect(upstream.send(ex, rewritten), receive, ex.reply.record)

    def _match_path(self, ex: Exchange, engine: Engine) -> None:
        """A path whose canonical form is a rewritten one becomes it; a near miss of one is
        a 404 under a route or a tool policy (``proxy.paths``)."""
        scope = ex.scope
        path = scope["path"]
        fixed = paths.canonical(path)
        if fixed in endpoints.REWRITTEN:
            spelled = fixed.encode()
            if path != fixed or scope.get("raw_path", spelled) != spelled:
                ex.scope = {**scope, "path": fixed, "raw_path": spelled}
        elif paths.near_miss(path, scope.get("raw_path", b"").decode("latin-1")) and (
            self.router is not None or policy_on(engine, scope["headers"], ex.switches)
        ):
            shown = scope.get("raw_path", path.encode()).decode("latin-1")[:200]
            raise ProxyError(
                404,
                f"{shown!r} is not a path this proxy forwards under a route or a tool policy: "
                f"it is near {endpoints.MESSAGES} but not it, and an upstream may read it as that "
                "with the tools unfiltered; send the request to /v1/messages",
            )


async def _asterisk(ex: Exchange, method: str) -> None:
    """``OPTIONS *`` asks about the server itself (RFC 9110 9.3.7): answered here, as the
    upstream is reached under a path of its own; ``*`` with any other method is not a
    request target (RFC 9112 3.2.4)."""
    if method == "OPTIONS":
        ex.reply.record.status = 200
        await ex.reply.start(200, list(SERVER_OPTIONS))
        await ex.reply.finish()
        return
    raise ProxyError(
        400, f"the request target * is only for OPTIONS (RFC 9112 3.2.4), not {method}", close=True
    )


def create_app(
    config: ProxyConfig, runtime: Runtime | None = None, *, engine: Engine | None = None
) -> ProxyApp:
    """The app for ``config``: ``engine`` if given, else :func:`build_engine`'s; with the
    bindings of ``config.bindings_dir`` over them (:class:`~bridge_rules.RulesError` when
    one is refused)."""
    if engine is None:
        engine = build_engine(config, runtime)
    return ProxyApp(engine, config)


def build_engine(config: ProxyConfig, runtime: Runtime | None = None) -> Engine:
    """The rules of ``runtime``, else the rules the config names (``RulesError`` when they do
    not load); with the seal key of ``BRIDGE_RULES_SEAL_KEY``
    (:class:`~bridge_rules.sealing.SealKeyError` when it is too short) and the gate's
    environment overrides as they are now, as a server reads its settings at start-up, and
    again on reload (SIGHUP)."""
    if runtime is None:
        runtime = load(list(config.rules) or None).runtime
    engine = Engine(runtime.with_sealer(Sealer.from_env()), env=dict(os.environ))
    size_cache(engine, config)
    return engine


def size_cache(engine: Engine, config: ProxyConfig) -> None:
    engine.runtime.message_cache.configure(
        enabled=config.outbound_cache_mb > 0,
        max_bytes=max(config.outbound_cache_mb, 1) * 1024 * 1024,
    )


def app_from_env() -> OpsApp:
    """Factory for ``uvicorn --factory`` worker processes (config in the environment)."""
    configure_logging()
    tracing.setup()  # each worker its own exporter (after the fork, as the SDK requires)
    config = ProxyConfig.from_env()
    app = with_ops(create_app(config), config.upstream)
    tune_for_serving()
    return app


__all__ = ["ProxyApp", "Route", "app_from_env", "build_engine", "create_app", "omit_text"]
