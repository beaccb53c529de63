"""The proxy's Prometheus metrics: counters and timings from each finished access record,
with bounded labels (status class, error kind, route), never a tool name or a model.
:class:`~bridge_rules.proxy.ops.OpsApp` serves them on ``/metrics``."""

from __future__ import annotations

import os

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.exposition import generate_latest
from prometheus_client.multiprocess import MultiProcessCollector

from bridge_rules.proxy.config import MULTIPROC_ENV
from bridge_rules.proxy.endpoints import REWRITTEN, ROUTE_PREFIX
from bridge_rules.proxy.obs import AccessRecord


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
        self.limited = Counter(
            "bridge_rules_key_limited",
            "Requests refused with 429 by a client key's limit, by key name and limit "
            "(concurrent, per_minute, sessions).",
            ["key", "limit"],
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
        route = route_label(record.path)
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
        if record.limit is not None and record.key is not None:
            self.limited.labels(record.key, record.limit).inc()
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


def route_label(path: str) -> str:
    """A bounded label for a path: the rewritten routes by name, everything else 'other'
    (a ``serve --config`` route's ``/r/<route>`` prefix aside: its name is ``rules_route``)."""
    if path.startswith(ROUTE_PREFIX):
        after = path.find("/", len(ROUTE_PREFIX))
        path = path[after:] if after > 0 else path
    if path in REWRITTEN:
        return path
    return "other"
