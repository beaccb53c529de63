"""The proxy as a plain ASGI app: read, rewrite (through the engine), forward, rewrite back.

Stateless by design: the gate decision comes from the request's own ``model``
and the reverse name map from its own ``tools[]`` (``OutboundResult.registered``),
so any number of workers or replicas can serve any request. All name and
argument logic lives in the engine; this module only moves bytes and faults.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterable, AsyncIterator, Mapping
from contextlib import suppress
from typing import Any, Protocol

import httpx
import orjson

from bridge_rules.proxy.body import ClientGone, parse_payload, read_body
from bridge_rules.proxy.config import ProxyConfig
from bridge_rules.proxy.errors import ProxyError, UpstreamAborted
from bridge_rules.proxy.forward import Exchange, forward
from bridge_rules.proxy.obs import AccessRecord, DebugLog, configure_logging, omit_text
from bridge_rules.proxy.ops import OpsApp, with_ops
from bridge_rules.proxy.reply import JSON, Message, Receive, Reply, Send

log = logging.getLogger("bridge_rules.proxy")

REWRITTEN_PATHS = frozenset({"/v1/messages", "/v1/messages/count_tokens"})
HEALTH = orjson.dumps({"status": "ok"})


class OutboundLike(Protocol):
    @property
    def payload(self) -> dict[str, Any]: ...
    @property
    def renames(self) -> Mapping[str, str]: ...
    @property
    def gate_open(self) -> bool: ...
    @property
    def registered(self) -> list[str]: ...


class EngineLike(Protocol):
    """The part of :class:`bridge_rules.Engine` the proxy relies on."""

    def outbound(self, payload: dict[str, Any], model: str | None = None) -> OutboundLike: ...

    def inbound(self, message: dict[str, Any], registered: list[str] | None = None) -> Any: ...

    def inbound_stream_async(
        self, chunks: AsyncIterable[bytes], registered: list[str] | None = None
    ) -> AsyncIterator[bytes]: ...


def _new_client(config: ProxyConfig) -> httpx.AsyncClient:
    timeout = httpx.Timeout(config.timeout, connect=config.connect_timeout)
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=256)
    client = httpx.AsyncClient(timeout=timeout, limits=limits, follow_redirects=False)
    # Forward exactly what the client sent: no httpx defaults the client did not ask for.
    for name in ("accept", "accept-encoding", "user-agent"):
        del client.headers[name]
    return client


class ProxyApp:
    def __init__(self, engine: EngineLike, config: ProxyConfig) -> None:
        self.engine = engine
        self.config = config
        self.debug = DebugLog(config.debug_log, config.log_prompts) if config.debug_log else None
        self._client: httpx.AsyncClient | None = None

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = _new_client(self.config)
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
        if self.debug is not None:
            self.debug.close()

    async def __call__(self, scope: Message, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await self._http(scope, receive, send)
        elif scope["type"] == "lifespan":
            await self._lifespan(receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            msg = await receive()
            if msg["type"] == "lifespan.startup":
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
            await reply.error(exc.status, exc.message)
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
            if self.debug is not None:
                self.debug.write(ex.debug_record())

    async def _handle(self, ex: Exchange, receive: Receive) -> None:
        method, path = ex.scope["method"], ex.scope["path"]
        if path == "/healthz" and method in ("GET", "HEAD"):
            await ex.reply.full(200, [(b"content-type", JSON)], HEALTH)
            return
        ex.body = await read_body(ex.scope, receive, self.config.max_body_bytes)
        ex.reply.record.bytes_in = len(ex.body)
        if method == "POST" and path in REWRITTEN_PATHS:
            self._outbound(ex)
        await self._until_disconnect(forward(self, ex), receive, ex.reply.record)

    def _outbound(self, ex: Exchange) -> None:
        payload = parse_payload(ex.body)
        model = payload.get("model")
        record = ex.reply.record
        record.model = model if isinstance(model, str) else None
        record.stream = payload.get("stream") is True
        try:
            result = self.engine.outbound(payload, model=record.model)
        except Exception as exc:
            log.error("engine failed on the request: %s: %s", type(exc).__name__, exc)
            raise ProxyError(
                500, f"bridge-rules could not rewrite the request ({type(exc).__name__})"
            ) from None
        record.gate = result.gate_open
        record.renames = dict(result.renames)
        ex.result = result
        if self.debug is not None:
            ex.debug["request_body"] = self.debug.body(payload)
            if result.gate_open:
                ex.debug["upstream_body"] = self.debug.body(result.payload)

    async def _until_disconnect(self, work: Any, receive: Receive, record: AccessRecord) -> None:
        """Run ``work``; if the client goes away first, cancel it (and so the upstream call)."""
        task = asyncio.ensure_future(work)

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass

        watcher = asyncio.ensure_future(watch())
        try:
            done, _ = await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            task.cancel()
            watcher.cancel()
            raise
        if task in done:
            watcher.cancel()
            task.result()
            return
        task.cancel()
        with suppress(asyncio.CancelledError, Exception):
            await task
        record.status, record.error = 499, "client_disconnected"


def create_app(config: ProxyConfig, engine: EngineLike | None = None) -> ProxyApp:
    """The app for ``config``; ``engine`` defaults to the rules the config names."""
    if engine is None:
        from bridge_rules.engine import load

        engine = load(list(config.rules) or None)
    assert engine is not None
    return ProxyApp(engine, config)


def app_from_env() -> OpsApp:
    """Factory for ``uvicorn --factory`` worker processes (config in the environment)."""
    configure_logging()
    config = ProxyConfig.from_env()
    return with_ops(create_app(config), config.upstream)


__all__ = ["EngineLike", "OutboundLike", "ProxyApp", "app_from_env", "create_app", "omit_text"]
