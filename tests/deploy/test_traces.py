"""Traces with the ``otel`` extra: the span tree, its attributes, ``traceparent`` upstream.

The proxy runs on loopback with an in-memory exporter (the SDK's own) as the tracer
provider, and the official ``anthropic`` SDK sends a request (it records a span of its
own and sends its context as ``traceparent``). Oracles that do not come from the proxy:
the W3C Trace Context format (a regular expression written from the spec), the trace and
span ids the SDK recorded on the client side, and the prompt text and API key the test
sent (which no attribute may contain). Without the ``OTEL_*`` variables a fresh
interpreter that builds the app has imported nothing of OpenTelemetry.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import anthropic
import pytest
from fake_upstream import FakeUpstream
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from servers import running_app

from bridge_rules.proxy import ProxyConfig, create_app, tracing
from bridge_rules.proxy.ops import with_ops
from bridge_rules.ruleset import load_runtime

# W3C Trace Context, section 3.2: version-traceid-parentid-flags, lower-case hex
TRACEPARENT = re.compile(r"^00-(?!0{32})([0-9a-f]{32})-(?!0{16})([0-9a-f]{16})-[0-9a-f]{2}$")
PROMPT = "the zebra password is hunter2-prompt-text"
KEY = "sk-ant-test-secret-key-0123456789"

EXPORTER = InMemorySpanExporter()
_PROVIDER = TracerProvider()
_PROVIDER.add_span_processor(SimpleSpanProcessor(EXPORTER))


@pytest.fixture
def traced(monkeypatch: pytest.MonkeyPatch) -> InMemorySpanExporter:
    if type(trace.get_tracer_provider()).__name__ == "ProxyTracerProvider":
        trace.set_tracer_provider(_PROVIDER)
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "otlp")
    monkeypatch.delenv("OTEL_SDK_DISABLED", raising=False)
    monkeypatch.setattr(tracing, "_TRACER", None)
    assert tracing.setup()
    EXPORTER.clear()
    return EXPORTER


@pytest.mark.parametrize("stream", [False, True])
def test_one_request_is_one_tree_and_its_context_goes_upstream(
    upstream: FakeUpstream, traced: InMemorySpanExporter, stream: bool
) -> None:
    proxy = create_app(ProxyConfig(upstream=upstream.url), load_runtime())
    with running_app(with_ops(proxy, upstream.url)) as url:
        client = anthropic.Anthropic(base_url=url, api_key=KEY, max_retries=0)
        kwargs = {
            "model": "claude-test-model",
            "max_tokens": 10,
            "messages": [{"role": "user", "content": PROMPT}],
            "tools": [{"name": "read", "input_schema": {"type": "object"}}],
        }
        if stream:
            with client.messages.stream(**kwargs) as events:  # type: ignore[arg-type]
                events.get_final_message()
        else:
            client.messages.create(**kwargs)  # type: ignore[call-overload]

    finished = traced.get_finished_spans()
    # the SDK records its own span and sends its context as traceparent: the client side
    (sdk,) = [s for s in finished if s.name.startswith("anthropic.")]
    client_trace = f"{sdk.context.trace_id:032x}"
    spans = {s.name: s for s in finished if "bridge_rules" in s.name}
    root = spans["POST bridge_rules.request"]
    children = ("bridge_rules.rewrite", "bridge_rules.upstream", "bridge_rules.way_back")
    assert set(spans) == {root.name, *children}
    assert root.kind == trace.SpanKind.SERVER
    assert root.parent is not None
    assert root.parent.span_id == sdk.context.span_id
    for name in children:
        span = spans[name]
        assert span.parent is not None
        assert span.parent.span_id == root.context.span_id
        assert f"{span.context.trace_id:032x}" == client_trace
    assert spans["bridge_rules.upstream"].kind == trace.SpanKind.CLIENT

    (sent,) = upstream.requests[-1].header("traceparent")
    found = TRACEPARENT.match(sent)
    assert found, sent
    assert found.group(1) == client_trace
    assert int(found.group(2), 16) == spans["bridge_rules.upstream"].context.span_id

    attributes = dict(root.attributes or {})
    assert attributes["http.response.status_code"] == 200
    assert attributes["gen_ai.request.model"] == "claude-test-model"
    assert attributes["bridge_rules.rules_hash"] == proxy.rules_hash
    assert attributes["bridge_rules.inbound.denied_calls"] == 0
    assert attributes["bridge_rules.inbound.unmapped_calls"] == 0
    assert "bridge_rules.route" not in attributes  # no routes: none named
    every = json.dumps([dict(s.attributes or {}) for s in spans.values()])
    for secret in (PROMPT, "hunter2", KEY, "zebra"):
        assert secret not in every


def test_without_the_variables_nothing_of_opentelemetry_is_imported() -> None:
    """A fresh interpreter: the serve path built and one request run through it."""
    script = """
import os, sys
for k in [k for k in os.environ if k.startswith("OTEL_")]:
    del os.environ[k]
from bridge_rules.cli import serve_cmd
from bridge_rules.proxy import ProxyConfig, create_app, tracing
from bridge_rules.proxy import lifecycle, server
from bridge_rules.proxy.ops import with_ops
from bridge_rules.ruleset import load_runtime
assert tracing.setup() is False
app = with_ops(create_app(ProxyConfig(upstream="http://127.0.0.1:9"), load_runtime()), "x")
print(sorted(m for m in sys.modules if m.split(".")[0] == "opentelemetry"))
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, False),
        ({"OTEL_TRACES_EXPORTER": "none"}, False),
        ({"OTEL_TRACES_EXPORTER": "otlp"}, True),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, True),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, True),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"}, False),
    ],
)
def test_which_variables_ask_for_traces(env: dict[str, str], expected: bool) -> None:
    assert tracing.wanted(env) is expected
