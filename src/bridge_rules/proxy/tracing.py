"""OpenTelemetry traces of the proxy's requests, when the operator asks for them.

With the ``otel`` extra installed and the standard ``OTEL_*`` variables set (an exporter in
``OTEL_TRACES_EXPORTER``, or an endpoint in ``OTEL_EXPORTER_OTLP_ENDPOINT`` /
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``; ``OTEL_SDK_DISABLED=true`` turns it off), each
request is one ``SERVER`` span, continuing the client's W3C ``traceparent`` if it sent one,
with children ``bridge_rules.rewrite`` (the outbound rewrite), ``bridge_rules.upstream``
(request sent until the upstream's headers are in; its context goes upstream as
``traceparent``) and ``bridge_rules.way_back`` (the answer read, rewritten and relayed).

The attributes are counts, names and hashes only: route, rules hash, model, status, the
inbound calls denied and unmapped. Never a prompt, a tool's input or a header value: a
trace store is read by more people than the proxy's debug log.

Without those variables nothing of OpenTelemetry is imported and every hook here is a
shared no-op context, so the request path pays one attribute read.
"""

from __future__ import annotations

import os
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from bridge_rules.proxy.obs import AccessRecord

_NOTHING: AbstractContextManager[Any] = nullcontext()
_TRACER: Any = None  # an opentelemetry Tracer once setup() found the variables


def wanted(env: os._Environ[str] | dict[str, str] = os.environ) -> bool:
    """Whether the ``OTEL_*`` variables ask for traces."""
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporter = env.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporter:
        return exporter != "none"
    return bool(
        env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    )


class TracingUnavailable(ImportError):
    """Traces were asked for, but the ``otel`` extra is not installed."""


def setup() -> bool:
    """Turn traces on when :func:`wanted`; a tracer provider already set (by the host
    program, or a test's in-memory exporter) is used as it is. Whether traces are on."""
    global _TRACER  # noqa: PLW0603 - one tracer per process, set once at start
    if not wanted():
        return False
    try:
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
    except ImportError:
        raise TracingUnavailable(
            "OTEL_* variables ask for traces but the otel extra is not installed: "
            "pip install 'bridge-rules[otel]'"
        ) from None
    if type(trace.get_tracer_provider()).__name__ == "ProxyTracerProvider":  # none set yet
        trace.set_tracer_provider(_provider(TracerProvider))
    _TRACER = trace.get_tracer("bridge_rules.proxy")
    return True


def _provider(provider_class: Any) -> Any:
    """An SDK provider exporting to ``OTEL_TRACES_EXPORTER`` (``otlp`` by default,
    ``console``), batched; the service name and resource from the standard variables."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter

    service = os.environ.get("OTEL_SERVICE_NAME", "bridge-rules")
    resource = Resource.create({"service.name": service})
    provider = provider_class(resource=resource)
    names = os.environ.get("OTEL_TRACES_EXPORTER", "otlp").lower().split(",")
    for name in (n.strip() for n in names):
        if name == "console":
            provider.add_span_processor(BatchSpanProcessor(ConsoleSpanExporter()))
        elif name == "otlp":
            try:
                from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
                    OTLPSpanExporter,
                )
            except ImportError:
                raise TracingUnavailable(
                    "OTEL_TRACES_EXPORTER=otlp needs opentelemetry-exporter-otlp-proto-http "
                    "(in the otel extra)"
                ) from None
            provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    return provider


def on() -> bool:
    return _TRACER is not None


def request(headers: list[tuple[bytes, bytes]], method: str) -> AbstractContextManager[Any]:
    """The span of one request, continuing the client's ``traceparent``."""
    if _TRACER is None:
        return _NOTHING
    from opentelemetry import propagate, trace

    carrier = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in headers}
    return _TRACER.start_as_current_span(  # type: ignore[no-any-return]
        f"{method} bridge_rules.request",
        context=propagate.extract(carrier),
        kind=trace.SpanKind.SERVER,
    )


def child(name: str, **attributes: str) -> AbstractContextManager[Any]:
    """A child span of the current one (the rewrite, the way back)."""
    if _TRACER is None:
        return _NOTHING
    return _TRACER.start_as_current_span(name, attributes=attributes)  # type: ignore[no-any-return]


def upstream_call(headers: list[tuple[bytes, bytes]]) -> AbstractContextManager[Any]:
    """The span of the upstream call; its W3C context replaces any ``traceparent`` and
    ``tracestate`` in ``headers`` (which go upstream) once entered."""
    if _TRACER is None:
        return _NOTHING
    return _Upstream(headers)


class _Upstream:
    def __init__(self, headers: list[tuple[bytes, bytes]]) -> None:
        from opentelemetry import trace

        self.headers = headers
        self.span = _TRACER.start_as_current_span(
            "bridge_rules.upstream", kind=trace.SpanKind.CLIENT
        )

    def __enter__(self) -> Any:
        from opentelemetry import propagate

        entered = self.span.__enter__()
        carrier: dict[str, str] = {}
        propagate.inject(carrier)
        self.headers[:] = [h for h in self.headers if h[0].lower() not in _W3C]
        self.headers.extend((k.encode(), v.encode("latin-1")) for k, v in carrier.items())
        return entered

    def __exit__(self, *exc: Any) -> Any:
        return self.span.__exit__(*exc)


_W3C = (b"traceparent", b"tracestate")


def rules(engine: Any) -> dict[str, str]:
    """The rules hash of the engine a request uses, set on the request span and returned
    for its rewrite span (nothing when traces are off)."""
    if _TRACER is None:
        return {}
    from opentelemetry import trace

    attributes = {"bridge_rules.rules_hash": str(engine.runtime.rules.digest)}
    trace.get_current_span().set_attributes(attributes)
    return attributes


def finish(record: AccessRecord) -> None:
    """The request span's attributes, from its finished access record."""
    if _TRACER is None:
        return
    from opentelemetry import trace

    span = trace.get_current_span()
    attributes: dict[str, Any] = {
        "http.request.method": record.method,
        "http.response.status_code": record.status,
        "bridge_rules.inbound.denied_calls": record.inbound_denied_calls,
        "bridge_rules.inbound.unmapped_calls": record.inbound_unmapped_calls,
    }
    if record.route is not None:
        attributes["bridge_rules.route"] = record.route
    if record.model is not None:
        attributes["gen_ai.request.model"] = record.model
    if record.error is not None:
        attributes["error.type"] = record.error
    span.set_attributes(attributes)
    if record.status >= 500:
        span.set_status(trace.StatusCode.ERROR)
