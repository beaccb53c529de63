"""What an operator needs around the proxy: readiness, metrics, request ids, settings checks.

:func:`with_ops` wraps the proxy's ASGI app in a thin layer that

- answers ``GET /readyz`` (200 when the rules are loaded, which they are once the app exists,
  and the upstream is ready, as its kind judges: an HTTP upstream accepts a TCP connection,
  the Claude Code CLI is found; 503 with the reason otherwise; the probe is
  cached for a few seconds so a busy prober cannot hammer the upstream) and ``GET /metrics``
  (Prometheus text format, from ``prometheus-client``); ``/healthz`` stays the app's own;
- gives every other request an id, taken from a sane incoming ``x-request-id`` or made
  fresh, returned as the ``x-request-id`` response header and written, with a timestamp, on
  the request's access-log line (through :data:`bridge_rules.proxy.obs.CURRENT_REQUEST`);
- counts requests, errors by kind and renames both ways, and times each request and the wait for its
  response to start (which is the upstream's latency plus the rewrite), from the finished
  access record, never from a body.

Metric labels are bounded sets (status class, error kind, route); tool names and models are
client-controlled and never become labels. With ``--workers N``, ``serve`` gives the workers
one ``PROMETHEUS_MULTIPROC_DIR`` (prometheus-client's multiprocess mode), so a scrape of any
worker reports every worker's requests, summed.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Awaitable, Callable
from random import getrandbits
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from prometheus_client import CONTENT_TYPE_LATEST

from bridge_rules.proxy import endpoints, tracing
from bridge_rules.proxy.browsers import BrowserRules
from bridge_rules.proxy.errors import ProxyError, error_body
from bridge_rules.proxy.httpupstream import reachable
from bridge_rules.proxy.metrics import Metrics, route_label
from bridge_rules.proxy.obs import CURRENT_REQUEST, AccessRecord, RequestContext

if TYPE_CHECKING:
    from bridge_rules.proxy.keyguard import KeyGuard

Message = dict[str, Any]
Own = Callable[[Any, bool, "ProxyError | None"], Awaitable[None]]
"""An endpoint answered here: given ``send``, whether the request is a HEAD, and why the
caller may not see the proxy's detail (``serve --keys`` without an admin key), or None."""
READY_CACHE_SECONDS = 5.0
_SANE_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
_JSON = [(b"content-type", b"application/json")]


# ------------------------------------------------------------------ the wrapper
@runtime_checkable
class Served(Protocol):
    """What :class:`OpsApp` asks the proxy app (``proxy.app.ProxyApp``) it wraps."""

    browsers: BrowserRules
    """Web pages' requests refused: ``/readyz`` and ``/metrics`` too."""
    draining: bool
    """Set by SIGTERM/SIGINT (``proxy.lifecycle``): ``/readyz`` answers 503 from then on."""
    keys: KeyGuard | None
    """Client keys (``serve --keys``): ``/metrics`` and ``/readyz``'s detail need an admin's."""

    @property
    def rules_hash(self) -> str: ...

    @property
    def routes_status(self) -> dict[str, Any] | None: ...

    async def readiness(self) -> str | None: ...


class OpsApp:
    """The proxy app with readiness, metrics and request ids around it."""

    def __init__(self, app: Any, upstream: str) -> None:
        self.app = app
        self.served = app if isinstance(app, Served) else None
        """The proxy app's own answers for ``/readyz``; None for any other ASGI app."""
        self.upstream = upstream
        self.metrics = Metrics()
        self._ready: tuple[float, str | None] | None = None
        self._probing = asyncio.Lock()  # one probe at a time; the others wait for its answer
        self._own: dict[tuple[str, str], Own] = endpoints.dispatch(
            {"readyz": self._readyz, "metrics": self._metrics}
        )
        """The endpoints this layer answers (``proxy.endpoints``), before any request id."""

    async def __call__(self, scope: Message, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method = scope["method"]
        own = self._own.get((method, scope["path"]))
        if own is not None:
            served = self.served  # the proxy's own rules for web pages
            refused = None if served is None else served.browsers.refusal(scope["headers"])
            if refused is not None:
                await _reply(send, 403, _JSON, error_body(403, refused), head=method == "HEAD")
                return
            await own(send, method == "HEAD", self._admin(scope["headers"]))
            return
        await self._tracked(scope, receive, send)

    async def _metrics(self, send: Any, head: bool, admin: ProxyError | None) -> None:
        if admin is not None:
            headers = [*_JSON, (b"connection", b"close")] if admin.close else _JSON
            await _reply(send, admin.status, headers, error_body(admin.status, admin.message), head)
            return
        body = self.metrics.exposition()
        headers = [(b"content-type", CONTENT_TYPE_LATEST.encode())]
        await _reply(send, 200, headers, body, head=head)

    async def _tracked(self, scope: Message, receive: Any, send: Any) -> None:
        if tracing.on():
            with tracing.request(scope["headers"], scope["method"]):
                await self._counted(scope, receive, send, self._observe_traced)
            return
        await self._counted(scope, receive, send, self.metrics.observe)

    def _observe_traced(self, record: AccessRecord) -> None:
        self.metrics.observe(record)
        tracing.finish(record)

    async def _counted(
        self, scope: Message, receive: Any, send: Any, observe: Callable[[AccessRecord], None]
    ) -> None:
        request_id = _request_id(scope)
        token = CURRENT_REQUEST.set(RequestContext(request_id, observe))
        started = time.perf_counter()
        duration, response_start = self.metrics.timed(route_label(scope["path"]))
        header = (b"x-request-id", request_id.encode())

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                # One id per response: an upstream's own x-request-id gives way to ours (its
                # Anthropic-style ``request-id`` passes through untouched).
                kept = [h for h in message.get("headers", ()) if h[0].lower() != b"x-request-id"]
                message = {**message, "headers": [*kept, header]}
                response_start.observe(time.perf_counter() - started)
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            duration.observe(time.perf_counter() - started)
            CURRENT_REQUEST.reset(token)

    def _admin(self, headers: Any) -> ProxyError | None:
        """Why the request may not see the proxy's detail (``serve --keys``: it needs an
        admin key, ``proxy.keyguard``), or None."""
        keys = None if self.served is None else self.served.keys
        if keys is None:
            return None
        try:
            keys.admin(headers)
        except ProxyError as exc:
            return exc
        return None

    async def _readyz(self, send: Any, head: bool, admin: ProxyError | None = None) -> None:
        detail = admin is None
        problem = await self._upstream_problem()
        draining = self.served is not None and self.served.draining
        ready = problem is None and not draining
        if not detail:  # a probe without an admin key learns ready or not, nothing more
            body = json.dumps({"status": "ready" if ready else "not ready"}).encode()
            await _reply(send, 200 if ready else 503, _JSON, body, head)
            return
        doc: dict[str, Any] = {
            # SIGTERM: 503 at once, so the balancer stops sending before the drain ends
            "status": "ready" if ready else "not ready" if problem else "draining",
            "rules": "loaded",
            "rules_hash": None if self.served is None else self.served.rules_hash,
            "upstream": "reachable" if problem is None else f"unreachable: {problem}",
        }
        routes = None if self.served is None else self.served.routes_status
        if routes is not None:  # each route's rules, and a reload that kept the old ones
            doc["routes"] = routes
        await _reply(send, 200 if ready else 503, _JSON, json.dumps(doc).encode(), head)

    async def _upstream_problem(self) -> str | None:
        async with self._probing:
            now = time.monotonic()
            if self._ready is None or now - self._ready[0] >= READY_CACHE_SECONDS:
                self._ready = (now, await self._probe())
            return self._ready[1]

    async def _probe(self) -> str | None:
        """Why the upstream cannot answer (its kind says: a TCP connection, the Claude Code
        CLI), or None; for an app that is not the proxy's, a TCP connection to ``upstream``."""
        if self.served is not None:
            return await self.served.readiness()
        return await reachable(self.upstream)


def with_ops(app: Any, upstream: str) -> OpsApp:
    return OpsApp(app, upstream)


def _request_id(scope: Message) -> str:
    for name, value in scope.get("headers", ()):
        if name == b"x-request-id":
            text = bytes(value).decode("latin-1")
            if _SANE_ID.fullmatch(text):
                return text
            break
    # 32 hex digits, as a uuid4's hex. An id names a request, it guards nothing (a client
    # may send its own), so the process's Mersenne Twister (reseeded in a forked child)
    # serves: ``secrets`` asked the kernel once per request, ~1% of a busy worker's CPU.
    return f"{getrandbits(128):032x}"


async def _reply(
    send: Any, status: int, headers: list[tuple[bytes, bytes]], body: bytes, head: bool
) -> None:
    """A whole response; for HEAD, the headers GET would get and no body."""
    length = (b"content-length", str(len(body)).encode())
    await send({"type": "http.response.start", "status": status, "headers": [*headers, length]})
    await send({"type": "http.response.body", "body": b"" if head else body})
