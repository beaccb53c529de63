"""What an operator needs around the proxy: readiness, metrics, request ids, settings checks.

:func:`with_ops` wraps the proxy's ASGI app in a thin layer that

- answers ``GET /readyz`` (200 when the rules are loaded, which they are once the app exists,
  and the upstream accepts a TCP connection; 503 with the reason otherwise; the probe is
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
import os
import re
import time
from collections.abc import Callable
from random import getrandbits
from typing import Any
from urllib.parse import urlsplit

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram
from prometheus_client.exposition import generate_latest
from prometheus_client.multiprocess import MultiProcessCollector

from bridge_rules.proxy import tracing
from bridge_rules.proxy.config import MULTIPROC_ENV
from bridge_rules.proxy.errors import error_body
from bridge_rules.proxy.obs import CURRENT_REQUEST, AccessRecord, RequestContext

Message = dict[str, Any]
READY_CACHE_SECONDS = 5.0
CONNECT_TIMEOUT = 2.0
_SANE_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
_JSON = [(b"content-type", b"application/json")]


# ------------------------------------------------------------------ metrics
class Metrics:
    """The proxy's counters, in a registry of their own (one per app, so tests stay apart)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "bridge_rules_requests",
            "Requests handled, by route and status class.",
            ["route", "status"],
            registry=self.registry,
        )
        self.errors = Counter(
            "bridge_rules_errors",
            "Requests that ended in a fault, by kind (the access log's 'error').",
            ["kind"],
            registry=self.registry,
        )
        self.renames = Counter(
            "bridge_rules_renames",
            "Tool names renamed on the way out (tools[], history and tool_choice).",
            registry=self.registry,
        )
        self.inbound_renames = Counter(
            "bridge_rules_inbound_renames",
            "Tool calls in responses whose name was mapped back to the agent's (JSON and SSE).",
            registry=self.registry,
        )
        self.cached = Counter(
            "bridge_rules_outbound_cache_messages",
            "Request messages the outbound cache served (reused) or took in (stored).",
            ["result"],
            registry=self.registry,
        )
        self.cached_tools = Counter(
            "bridge_rules_outbound_cache_tools",
            "Rewritten requests whose tools array came from the outbound cache.",
            registry=self.registry,
        )
        self._reused, self._stored = self.cached.labels("reused"), self.cached.labels("stored")
        self.gate_closed = Counter(
            "bridge_rules_gate_closed",
            "Rewritable requests passed through untouched because the gate was closed.",
            registry=self.registry,
        )
        self.duration = Histogram(
            "bridge_rules_request_duration_seconds",
            "Whole request, first byte in to last byte out.",
            ["route"],
            registry=self.registry,
        )
        self.response_start = Histogram(
            "bridge_rules_upstream_latency_seconds",
            "Request received to response headers sent: the upstream's latency plus the rewrite.",
            ["route"],
            registry=self.registry,
        )

        self.unmapped = Counter(
            "bridge_rules_unmapped_inbound",
            "Tool calls in responses whose name maps to no registered tool (counted under "
            "inbound.unmapped: warn or error).",
            registry=self.registry,
        )
        self.routed = Counter(
            "bridge_rules_route_requests",
            "Requests a serve --config route took, by route and status class.",
            ["rules_route", "status"],
            registry=self.registry,
        )
        self.denied = Counter(
            "bridge_rules_denied_inbound",
            "Tool calls in responses to tools the policy denies (policy.on_denied).",
            registry=self.registry,
        )
        # Labelled children by label values, made on first use (``labels()`` per request
        # costs more than the update itself). The label sets are small and bounded.
        self._requests: dict[tuple[str, int], Counter] = {}
        self._routed: dict[tuple[str, int], Counter] = {}
        self._duration: dict[str, Histogram] = {}
        self._response_start: dict[str, Histogram] = {}

    def timed(self, route: str) -> tuple[Histogram, Histogram]:
        """The (duration, response start) histograms of ``route``."""
        duration = self._duration.get(route)
        if duration is None:
            duration = self._duration[route] = self.duration.labels(route)
            self._response_start[route] = self.response_start.labels(route)
        return duration, self._response_start[route]

    def observe(self, record: AccessRecord) -> None:
        route = _route(record.path)
        key = (route, record.status // 100)
        counter = self._requests.get(key)
        if counter is None:
            counter = self._requests[key] = self.requests.labels(route, f"{key[1]}xx")
        counter.inc()
        if record.route is not None:
            routed_key = (record.route, key[1])
            routed = self._routed.get(routed_key)
            if routed is None:
                routed = self._routed[routed_key] = self.routed.labels(record.route, f"{key[1]}xx")
            routed.inc()
        if record.error is not None:
            self.errors.labels(record.error).inc()
        if record.gate is False:
            self.gate_closed.inc()
        if record.renames:
            self.renames.inc(len(record.renames))
        if record.cache is not None:
            reused, stored, tools = record.cache
            if reused:
                self._reused.inc(reused)
            if stored:
                self._stored.inc(stored)
            if tools:
                self.cached_tools.inc()
        if record.inbound_renamed_calls:
            self.inbound_renames.inc(record.inbound_renamed_calls)
        if record.inbound_unmapped_calls:
            self.unmapped.inc(record.inbound_unmapped_calls)
        if record.inbound_denied_calls:
            self.denied.inc(record.inbound_denied_calls)

    def exposition(self) -> bytes:
        """The text ``/metrics`` answers: this process's metrics, or, when ``serve`` runs
        several workers (``PROMETHEUS_MULTIPROC_DIR`` set), every worker's, summed."""
        if os.environ.get(MULTIPROC_ENV):
            registry = CollectorRegistry()
            MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
            return generate_latest(registry)
        return generate_latest(self.registry)


def _route(path: str) -> str:
    """A bounded label for a path: the rewritten routes by name, everything else 'other'
    (a ``serve --config`` route's ``/r/<route>`` prefix aside: its name is ``rules_route``)."""
    if path.startswith("/r/"):
        path = path[path.find("/", 3) :] if path.find("/", 3) > 0 else path
    if path in ("/v1/messages", "/v1/messages/count_tokens"):
        return path
    return "other"


# ------------------------------------------------------------------ the wrapper
class OpsApp:
    """The proxy app with readiness, metrics and request ids around it."""

    def __init__(self, app: Any, upstream: str) -> None:
        self.app = app
        self.upstream = upstream
        self.metrics = Metrics()
        self._ready: tuple[float, str | None] | None = None
        self._probing = asyncio.Lock()  # one probe at a time; the others wait for its answer

    async def __call__(self, scope: Message, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method, path = scope["method"], scope["path"]
        if method in ("GET", "HEAD") and path in ("/readyz", "/metrics"):
            browsers = getattr(self.app, "browsers", None)  # the proxy's own rules
            refused = None if browsers is None else browsers.refusal(scope["headers"])
            if refused is not None:
                await _reply(send, 403, _JSON, error_body(403, refused), head=method == "HEAD")
                return
        if method in ("GET", "HEAD") and path == "/readyz":
            await self._readyz(send, head=method == "HEAD")
            return
        if method in ("GET", "HEAD") and path == "/metrics":
            body = self.metrics.exposition()
            headers = [(b"content-type", CONTENT_TYPE_LATEST.encode())]
            await _reply(send, 200, headers, body, head=method == "HEAD")
            return
        await self._tracked(scope, receive, send)

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
        duration, response_start = self.metrics.timed(_route(scope["path"]))
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

    async def _readyz(self, send: Any, head: bool) -> None:
        problem = await self._upstream_problem()
        ready = problem is None and not getattr(self.app, "draining", False)
        doc = {
            # SIGTERM: 503 at once, so the balancer stops sending before the drain ends
            "status": "ready" if ready else "not ready" if problem else "draining",
            "rules": "loaded",
            "rules_hash": getattr(self.app, "rules_hash", None),  # changes on a reload
            "upstream": "reachable" if problem is None else f"unreachable: {problem}",
        }
        routes = getattr(self.app, "routes_status", None)
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
        """Why a TCP connection to the upstream fails (within CONNECT_TIMEOUT), or None;
        for the Claude Code upstream, why its CLI cannot be started."""
        cli = getattr(self.app, "cli", None)
        if cli is not None:
            return cli.problem()  # type: ignore[no-any-return]
        parts = urlsplit(self.upstream)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        problem: str | None = None
        try:
            _, writer = await asyncio.wait_for(
                asyncio.open_connection(parts.hostname, port), CONNECT_TIMEOUT
            )
            writer.close()
        except (OSError, asyncio.TimeoutError) as exc:
            problem = str(exc) or type(exc).__name__
        return problem


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
