"""The proxy's HTTP behaviour: routing, bodies, headers, content encodings, streaming."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import pytest
from doubles import marking_engine
from fake_upstream import FakeUpstream
from servers import running_app
from tests.proxy import loopback

from bridge_rules.proxy import ProxyConfig, create_app

MakeProxy = Callable[..., str]

REQUEST = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 100,
    "messages": [{"role": "user", "content": "Read hello.txt"}],
    "tools": [{"name": "read", "input_schema": {"type": "object"}}],
}
WIRE_REQUEST = {**REQUEST, "tools": [{"name": "READ", "input_schema": {"type": "object"}}]}


@pytest.fixture
def make_proxy(upstream: FakeUpstream) -> Iterator[MakeProxy]:
    with ExitStack() as stack:

        def make(**options: Any) -> str:
            config = ProxyConfig(upstream=options.pop("upstream", upstream.url), **options)
            return stack.enter_context(running_app(create_app(config, engine=marking_engine())))

        yield make


@pytest.fixture
def proxy(make_proxy: MakeProxy) -> str:
    return make_proxy()


def test_healthz(proxy: str) -> None:
    r = loopback.get(proxy + "/healthz")
    assert r.status_code == 200
    assert r.json() == {"status": "ok"}


def test_message_is_rewritten_both_ways_with_lengths_recomputed(
    proxy: str, upstream: FakeUpstream
) -> None:
    upstream.script.tool_calls = [{"name": "READ", "input": {"path": "hello.txt"}}]
    r = loopback.post(proxy + "/v1/messages", json=REQUEST, headers={"x-api-key": "sk-test"})
    assert r.status_code == 200
    body = r.json()
    assert body["content"][0]["name"] == "read"  # mapped back to the request's own tool
    assert int(r.headers["content-length"]) == len(r.content)
    sent = upstream.requests[-1]
    assert sent.json == WIRE_REQUEST
    assert sent.header("content-length") == [str(len(sent.body))]
    assert sent.header("accept-encoding") == ["identity"]  # so the proxy can rewrite the answer


def test_gate_closed_passes_bytes_through_untouched(proxy: str, upstream: FakeUpstream) -> None:
    raw = json.dumps({**REQUEST, "model": "gpt-4o"}, indent=3).encode()
    r = loopback.post(proxy + "/v1/messages", content=raw, headers={"accept-encoding": "gzip"})
    assert upstream.requests[-1].body == raw
    assert upstream.requests[-1].header("accept-encoding") == ["gzip"]
    assert r.json()["content"][0]["name"] == "read"  # the upstream's answer, as it came


def test_credentials_and_anthropic_headers_are_forwarded_hop_by_hop_dropped(
    proxy: str, upstream: FakeUpstream
) -> None:
    headers = [
        ("x-api-key", "sk-ant-test"),
        ("authorization", "Bearer sk-ant-oat-test"),
        ("anthropic-version", "2023-06-01"),
        ("anthropic-beta", "interleaved-thinking-2025-05-14"),
        ("anthropic-beta", "fine-grained-tool-streaming-2025-05-14"),
        ("x-stainless-lang", "js"),
        ("connection", "keep-alive, x-hop"),
        ("x-hop", "connection-scoped"),
        ("keep-alive", "timeout=5"),
        ("proxy-authorization", "Basic secret"),
        ("te", "trailers"),
    ]
    loopback.post(proxy + "/v1/messages", json=REQUEST, headers=headers)
    sent = upstream.requests[-1]
    assert sent.header("x-api-key") == ["sk-ant-test"]
    assert sent.header("authorization") == ["Bearer sk-ant-oat-test"]
    assert sent.header("anthropic-version") == ["2023-06-01"]
    beta = ",".join(sent.header("anthropic-beta"))
    assert "interleaved-thinking-2025-05-14" in beta
    assert "fine-grained-tool-streaming-2025-05-14" in beta
    assert sent.header("x-stainless-lang") == ["js"]
    for dropped in ("x-hop", "keep-alive", "proxy-authorization", "te"):
        assert sent.header(dropped) == [], dropped
    assert sent.header("host") == [upstream.url.removeprefix("http://")]


def test_response_headers_forwarded_without_hop_by_hop(
    make_proxy: MakeProxy, upstream: FakeUpstream
) -> None:
    upstream.script.extra_headers = [
        ("anthropic-ratelimit-requests-remaining", "99"),
        ("x-hop-resp", "1"),
        ("connection", "x-hop-resp"),
    ]
    proxy = make_proxy()
    r = loopback.post(proxy + "/v1/messages", json=REQUEST)
    assert r.headers["request-id"] == "req_fake"
    assert r.headers["anthropic-ratelimit-requests-remaining"] == "99"
    assert "x-hop-resp" not in r.headers


def test_stream_goes_through_the_engine_event_by_event(
    make_proxy: MakeProxy, upstream: FakeUpstream
) -> None:
    upstream.script.chunk = 2
    upstream.script.event_gap = 0.02
    upstream.script.tool_calls = [{"name": "READ", "input": {"path": "hello.txt"}}]
    proxy = make_proxy()
    seen_before_upstream_finished = None
    chunks = []
    with loopback.stream("POST", proxy + "/v1/messages", json={**REQUEST, "stream": True}) as r:
        assert r.headers["content-type"].startswith("text/event-stream")
        assert "content-length" not in r.headers
        for chunk in r.iter_raw():
            if seen_before_upstream_finished is None:
                seen_before_upstream_finished = upstream.streams_done == 0
            chunks.append(chunk)
    assert seen_before_upstream_finished is True  # flushed, not buffered whole
    assert len(chunks) > 5
    text = b"".join(chunks).decode()
    assert text.count("event: content_block_delta") == len('{"path": "hello.txt"}') // 2 + 1
    assert text.rstrip().endswith('data: {"type": "message_stop"}')
    assert upstream.requests[-1].json["tools"][0]["name"] == "READ"
    assert '"name":"read"' in text.replace(" ", "")  # the block start, mapped back
    assert '"READ"' not in text


def test_count_tokens_gets_the_outbound_rewrite(proxy: str, upstream: FakeUpstream) -> None:
    r = loopback.post(proxy + "/v1/messages/count_tokens", json=REQUEST)
    assert r.json() == {"input_tokens": 42}
    assert upstream.requests[-1].path == "/v1/messages/count_tokens"
    assert upstream.requests[-1].json == WIRE_REQUEST


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE", "PATCH"])
def test_other_paths_pass_through_with_method_query_and_body(
    proxy: str, upstream: FakeUpstream, method: str
) -> None:
    body = b"" if method in ("GET", "DELETE") else b"not json, untouched"
    r = loopback.request(method, proxy + "/v1/models/x%2Fy?limit=2&after=a%20b", content=body)
    assert r.status_code == 200
    assert r.json() == {
        "method": method,
        "path": "/v1/models/x%2Fy",
        "query": "limit=2&after=a%20b",
        "body": body.decode(),
    }


def test_gzip_answer_is_decoded_before_rewriting(
    make_proxy: MakeProxy, upstream: FakeUpstream
) -> None:
    upstream.script.gzip = True  # ignores the proxy's accept-encoding: identity
    upstream.script.tool_calls = [{"name": "READ", "input": {"path": "hello.txt"}}]
    proxy = make_proxy()
    r = loopback.post(proxy + "/v1/messages", json=REQUEST)
    assert "content-encoding" not in r.headers
    assert r.json()["content"][0]["name"] == "read"


def test_gzip_passthrough_keeps_encoding_and_length(
    make_proxy: MakeProxy, upstream: FakeUpstream
) -> None:
    upstream.script.gzip = True
    proxy = make_proxy()
    r = loopback.get(proxy + "/v1/models", headers={"accept-encoding": "gzip"})
    assert r.headers["content-encoding"] == "gzip"
    assert int(r.headers["content-length"]) == len(gzip.compress(r.content))
    assert r.json()["path"] == "/v1/models"
