"""Faults: every one ends in an Anthropic-shaped error or the upstream's own, never a hang."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import httpx
import pytest
from doubles import marking_engine
from fake_upstream import FakeUpstream
from servers import running_app
from tests.ports import free_port
from tests.proxy import loopback

from bridge_rules.proxy import ProxyConfig, create_app

REQUEST = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 100,
    "messages": [{"role": "user", "content": "hi"}],
    "tools": [{"name": "read", "input_schema": {"type": "object"}}],
}
MakeProxy = Callable[..., str]


@pytest.fixture
def make_proxy(upstream: FakeUpstream) -> Iterator[MakeProxy]:
    with ExitStack() as stack:

        def make(engine: Any = None, **options: Any) -> str:
            config = ProxyConfig(upstream=options.pop("upstream", upstream.url), **options)
            app = create_app(config, engine=engine or marking_engine())
            return stack.enter_context(running_app(app))

        yield make


def error_of(r: httpx.Response) -> dict[str, Any]:
    body = r.json()
    assert body["type"] == "error"
    assert set(body["error"]) == {"type", "message"}
    return dict(body["error"])


def closed_port() -> int:
    return free_port()  # nothing listens there: every connection is refused


def test_unreachable_upstream_is_502(make_proxy: MakeProxy) -> None:
    proxy = make_proxy(upstream=f"http://127.0.0.1:{closed_port()}")
    r = loopback.post(proxy + "/v1/messages", json=REQUEST)
    assert r.status_code == 502
    err = error_of(r)
    assert err["type"] == "api_error"
    assert "cannot reach the upstream" in err["message"]


def test_silent_upstream_times_out_with_504(make_proxy: MakeProxy, upstream: FakeUpstream) -> None:
    upstream.script.delay = 3
    proxy = make_proxy(timeout=0.3)
    r = loopback.post(proxy + "/v1/messages", json=REQUEST, timeout=10)
    assert r.status_code == 504
    assert "did not answer within 0.3s" in error_of(r)["message"]


@pytest.mark.parametrize("status", [400, 401, 429, 500, 529])
@pytest.mark.parametrize("stream", [False, True])
def test_upstream_errors_pass_through(
    make_proxy: MakeProxy, upstream: FakeUpstream, status: int, stream: bool
) -> None:
    own = {"type": "error", "error": {"type": "upstream_own", "message": f"status {status}"}}
    upstream.script.status, upstream.script.error_body = status, json.dumps(own).encode()
    proxy = make_proxy()
    r = loopback.post(proxy + "/v1/messages", json={**REQUEST, "stream": stream})
    assert r.status_code == status
    assert r.json() == own


@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "gpt-4o"])  # rewritten and untouched
def test_stream_cut_mid_way_ends_with_an_sse_error_event(
    make_proxy: MakeProxy, upstream: FakeUpstream, model: str
) -> None:
    upstream.script.cut_after_events = 3
    proxy = make_proxy()
    r = loopback.post(proxy + "/v1/messages", json={**REQUEST, "model": model, "stream": True})
    assert r.status_code == 200
    events = r.text.strip().split("\n\n")
    assert len(events) == 4
    assert events[-1].startswith("event: error\ndata: ")
    data = json.loads(events[-1].split("data: ", 1)[1])
    assert data["type"] == "error"
    assert "closed the stream mid-response" in data["error"]["message"]


def assert_cancelled(upstream: FakeUpstream) -> None:
    """The one call the client left was cancelled upstream, not streamed to its end.

    On a loaded machine the proxy may notice the client leaving before it has sent the
    request on: then the upstream sees nothing at all, which is as good. Either way, by
    the time an uncancelled stream would have ended, none did.
    """
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline and not (
        upstream.requests and upstream.disconnects >= len(upstream.requests)
    ):
        time.sleep(0.02)
    assert len(upstream.requests) <= 1
    assert upstream.disconnects == len(upstream.requests)
    assert upstream.streams_done == 0


def test_client_disconnect_cancels_the_upstream_request(
    make_proxy: MakeProxy, upstream: FakeUpstream
) -> None:
    upstream.script.chunk, upstream.script.event_gap = 1, 0.05  # ~1.5 s of events
    proxy = make_proxy()
    with loopback.stream("POST", proxy + "/v1/messages", json={**REQUEST, "stream": True}) as r:
        next(r.iter_raw())
    assert_cancelled(upstream)


def test_client_leaving_before_the_upstream_answers_cancels_it(
    make_proxy: MakeProxy, upstream: FakeUpstream
) -> None:
    # The client gives up long before the watcher starts (WATCH_AFTER) and before the
    # upstream's status line: the call is still cancelled, never streamed to its end.
    upstream.script.delay, upstream.script.chunk, upstream.script.event_gap = 0.3, 1, 0.05
    proxy = make_proxy()
    with pytest.raises(httpx.ReadTimeout):
        loopback.post(
            proxy + "/v1/messages",
            json={**REQUEST, "stream": True},
            timeout=httpx.Timeout(5.0, read=0.01),
        )
    assert_cancelled(upstream)


@pytest.mark.parametrize("chunked", [False, True])
def test_body_over_the_limit_is_413(
    make_proxy: MakeProxy, upstream: FakeUpstream, chunked: bool
) -> None:
    proxy = make_proxy(max_body_bytes=1000)
    big = json.dumps({**REQUEST, "pad": "x" * 5000}).encode()
    content: Any = iter([big[:2000], big[2000:]]) if chunked else big
    r = loopback.post(proxy + "/v1/messages", content=content)
    assert r.status_code == 413
    err = error_of(r)
    assert err["type"] == "request_too_large"
    assert "at most 1000" in err["message"]
    assert upstream.requests == []


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"model": "claude", ', "request body is not valid JSON"),
        (b"", "request body is empty"),
        (b"[1, 2]", "must be a JSON object, not a JSON array"),
        (b'"text"', "must be a JSON object, not a JSON string"),
    ],
)
def test_malformed_json_is_400(
    make_proxy: MakeProxy, upstream: FakeUpstream, body: bytes, message: str
) -> None:
    proxy = make_proxy()
    r = loopback.post(proxy + "/v1/messages", content=body)
    assert r.status_code == 400
    err = error_of(r)
    assert err["type"] == "invalid_request_error"
    assert message in err["message"]
    assert upstream.requests == []


def test_engine_failure_is_a_500_not_a_traceback(make_proxy: MakeProxy) -> None:
    proxy = make_proxy(engine=marking_engine(fail=True))
    r = loopback.post(proxy + "/v1/messages", json=REQUEST)
    assert r.status_code == 500
    assert "could not rewrite the request (RuntimeError)" in error_of(r)["message"]
