"""Hostile clients and upstreams (issue 13): no cross-client state, no 500, no stalled
event loop, bounded buffers, one error event, exact numbers, private logs.

Real servers on 127.0.0.1: the proxy under uvicorn with the default rules, and a
scripted upstream (``canned.Canned``) or the fake Anthropic one.
"""

from __future__ import annotations

import json
import resource
import socket
import stat
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest
from canned import Canned, Reply
from fake_upstream import FakeUpstream
from servers import running_app
from tests.proxy import loopback

from bridge_rules import jsonio
from bridge_rules.proxy import ProxyConfig, create_app
from bridge_rules.ruleset import load_runtime
from bridge_rules.runtime import Runtime

REQUEST = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 100,
    "messages": [{"role": "user", "content": "Read hello.txt"}],
    "tools": [{"name": "read", "input_schema": {"type": "object"}}],
}
BIG = "18446744073709551617"  # 2**64 + 1: no 64-bit integer holds it
NEG = "-9223372036854775809"  # one below the smallest i64
HUGE = "9" * 5000  # longer than Python's int-to-str limit
MakeProxy = Callable[..., str]


@pytest.fixture(scope="module")
def runtime() -> Runtime:
    return load_runtime()


@pytest.fixture
def canned() -> Iterator[Canned]:
    with Canned() as server:
        yield server


@pytest.fixture
def make_proxy(runtime: Runtime) -> Iterator[MakeProxy]:
    with ExitStack() as stack:

        def make(upstream: str, **options: Any) -> str:
            app = create_app(ProxyConfig(upstream=upstream, **options), runtime)
            return stack.enter_context(running_app(app))

        yield make


def sse(*events: tuple[str, dict[str, Any]]) -> list[bytes]:
    return [f"event: {n}\ndata: {json.dumps({'type': n, **d})}\n\n".encode() for n, d in events]


def raw_exchange(url: str, request: bytes, stall: bool = False, timeout: float = 10) -> bytes:
    """Send ``request`` on a fresh socket; read the answer until the server closes it."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        sock.sendall(request)
        chunks = []
        while True:
            data = sock.recv(65536)
            if not data:
                break
            chunks.append(data)
            if not stall and b"\r\n\r\n" in b"".join(chunks):
                head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
                length = [
                    int(line.split(b":")[1]) for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                ]  # fmt: skip
                if length and len(body) >= length[0]:
                    break
        return b"".join(chunks)


# ---------------------------------------------------------------- per-client state
def test_upstream_cookies_never_reach_another_client(make_proxy: MakeProxy, canned: Canned) -> None:
    canned.reply = Reply(headers=[("set-cookie", "session=client-a; Path=/")], body=[b"{}"])
    proxy = make_proxy(canned.url)
    first = loopback.get(proxy + "/v1/models", headers={"x-api-key": "client-a"})
    assert first.headers["set-cookie"] == "session=client-a; Path=/"  # passed to its client
    loopback.get(proxy + "/v1/models", headers={"x-api-key": "client-b"})
    loopback.post(proxy + "/v1/messages", json=REQUEST, headers={"x-api-key": "client-b"})
    assert [s.header("cookie") for s in canned.seen] == [[], [], []]


def test_a_clients_own_cookie_header_is_forwarded(make_proxy: MakeProxy, canned: Canned) -> None:
    canned.reply = Reply(body=[b"{}"])
    proxy = make_proxy(canned.url)
    loopback.get(proxy + "/v1/models", headers={"cookie": "mine=1"})
    assert canned.seen[-1].header("cookie") == ["mine=1"]


# ---------------------------------------------------------------- deep JSON, exact numbers
# Built as text: the stdlib json module itself cannot write these.
NUMBERS = f'{{"big":{BIG},"neg":{NEG},"huge":{HUGE},"small":[1,-2,3.5]}}'


def deep(depth: int, leaf: str = "1") -> str:
    return "[" * depth + leaf + "]" * depth


def with_metadata(value: str) -> bytes:
    history = {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "read", "input": {"path": "a"}}]}  # fmt: skip
    body = json.dumps({**REQUEST, "messages": [*REQUEST["messages"], history]})
    return (body[:-1] + f', "metadata": {{"user_id": {value}}}}}').encode()


def answer(stream: bool, extra: str) -> Reply:
    """A Read call whose input carries ``extra`` (JSON text) under the key ``extra``."""
    args = '{"file_path": "a", "extra": ' + extra + "}"
    if not stream:
        message = (
            '{"id":"m","type":"message","role":"assistant","model":"claude-sonnet-4-5",'
            '"content":[{"type":"tool_use","id":"t","name":"Read","input":' + args + "}],"
            '"stop_reason":"tool_use","stop_sequence":null}'
        )
        return Reply(body=[message.encode()])
    block = {"type": "tool_use", "id": "t", "name": "Read", "input": {}}
    pieces = [args[i : i + 4000] for i in range(0, len(args), 4000)]
    events = sse(
        ("message_start", {"message": {"id": "m", "content": []}}),
        ("content_block_start", {"index": 0, "content_block": block}),
        *[
            ("content_block_delta",
             {"index": 0, "delta": {"type": "input_json_delta", "partial_json": p}})
            for p in pieces
        ],
        ("content_block_stop", {"index": 0}),
        ("message_stop", {}),
    )  # fmt: skip
    return Reply(content_type="text/event-stream", body=events)


def returned_args(r: httpx.Response, stream: bool) -> str:
    """The tool call's input as the client received it, as JSON text without spaces."""
    if stream:
        deltas = [
            json.loads(line[6:])["delta"]["partial_json"]
            for line in r.text.splitlines()
            if line.startswith("data: ") and "input_json_delta" in line
        ]
        return "".join(deltas).replace(" ", "")
    text = r.text.replace(" ", "")
    return text[text.index('"input":') + 8 :]


@pytest.mark.parametrize("depth", [300, 1000, 5000])
@pytest.mark.parametrize("debug", [None, "omit", "prompts"])
def test_deep_json_is_forwarded_never_a_500(
    make_proxy: MakeProxy, canned: Canned, tmp_path: Path, depth: int, debug: str | None
) -> None:
    options: dict[str, Any] = {}
    if debug:
        options = {"debug_log": str(tmp_path / "d.jsonl"), "log_prompts": debug == "prompts"}
    canned.reply = answer(False, "1")
    proxy = make_proxy(canned.url, **options)
    r = loopback.post(proxy + "/v1/messages", content=with_metadata(deep(depth)))
    assert r.status_code == 200, r.text
    sent = canned.seen[-1].body.decode()
    assert f'"metadata":{{"user_id":{deep(depth)}}}' in sent
    assert '"name":"Read"' in sent  # rewritten, not passed through


def test_deep_json_past_the_stack_parsers_limit_is_a_400(
    make_proxy: MakeProxy, canned: Canned
) -> None:
    depth = jsonio.STACK_PARSER_LIMIT // 2 + 1000
    proxy = make_proxy(canned.url)
    for body in (with_metadata(deep(depth)), deep(depth).encode()):
        r = loopback.post(proxy + "/v1/messages", content=body)
        assert r.status_code == 400, r.text
        assert "nested deeper than about 1,000 levels" in r.json()["error"]["message"]
    assert canned.seen == []


def test_a_response_too_deep_to_read_comes_back_as_the_upstream_sent_it(
    make_proxy: MakeProxy, canned: Canned
) -> None:
    canned.reply = answer(False, deep(jsonio.STACK_PARSER_LIMIT // 2 + 1000, '"x"'))
    proxy = make_proxy(canned.url)
    r = loopback.post(proxy + "/v1/messages", json=REQUEST)
    assert r.status_code == 200
    assert r.content == canned.reply.body[0]  # untouched: nothing could be mapped back


@pytest.mark.parametrize("stream", [False, True])
def test_deep_json_in_the_response_comes_back_whole(
    make_proxy: MakeProxy, canned: Canned, stream: bool
) -> None:
    value = deep(2000, '"x"')
    canned.reply = answer(stream, value)
    proxy = make_proxy(canned.url)
    r = loopback.post(proxy + "/v1/messages", json={**REQUEST, "stream": stream})
    assert r.status_code == 200
    args = returned_args(r, stream)
    assert f'"extra":{value}' in args
    assert '"path":"a"' in args  # the call was adapted (file_path -> path) on the way


def test_big_integers_go_upstream_byte_exact(make_proxy: MakeProxy, canned: Canned) -> None:
    canned.reply = answer(False, "1")
    proxy = make_proxy(canned.url)
    r = loopback.post(proxy + "/v1/messages", content=with_metadata(NUMBERS))
    assert r.status_code == 200
    sent = canned.seen[-1].body.decode()
    assert f'"metadata":{{"user_id":{NUMBERS}}}' in sent
    assert '"name":"Read"' in sent


@pytest.mark.parametrize("stream", [False, True])
def test_big_integers_come_back_byte_exact(
    make_proxy: MakeProxy, canned: Canned, stream: bool
) -> None:
    canned.reply = answer(stream, NUMBERS)
    proxy = make_proxy(canned.url)
    r = loopback.post(proxy + "/v1/messages", json={**REQUEST, "stream": stream})
    assert r.status_code == 200
    args = returned_args(r, stream)
    assert f'"extra":{NUMBERS}' in args
    assert '"path":"a"' in args


# ---------------------------------------------------------------- the event loop
def test_many_headers_get_431_quickly_and_healthz_keeps_answering(
    make_proxy: MakeProxy, upstream: FakeUpstream
) -> None:
    proxy = make_proxy(upstream.url)
    lines = b"".join(b"x-h%d: v\r\n" % i for i in range(16_000))
    request = (
        b"POST /v1/messages HTTP/1.1\r\nhost: 127.0.0.1\r\n"
        + lines
        + b"content-length: 2\r\n\r\n{}"
    )
    health: list[float] = []

    def probe() -> None:
        for _ in range(5):
            start = time.perf_counter()
            loopback.get(proxy + "/healthz", timeout=10)
            health.append(time.perf_counter() - start)

    thread = threading.Thread(target=probe)
    start = time.perf_counter()
    thread.start()
    answer = raw_exchange(proxy, request)
    took = time.perf_counter() - start
    thread.join()
    assert answer.startswith(b"HTTP/1.1 431 ")
    assert b"at most 100 (bridge-rules serve --max-headers)" in answer
    assert took < 5
    assert max(health) < 2
    assert upstream.requests == []


def test_oversized_header_bytes_get_431(make_proxy: MakeProxy, upstream: FakeUpstream) -> None:
    proxy = make_proxy(upstream.url, max_header_bytes=4096)
    r = loopback.post(proxy + "/v1/messages", json=REQUEST, headers={"x-big": "v" * 5000})
    assert r.status_code == 431
    assert "--max-header-bytes" in r.json()["error"]["message"]
    assert upstream.requests == []


def test_a_stalled_body_gets_408_while_other_clients_are_served(
    make_proxy: MakeProxy, upstream: FakeUpstream
) -> None:
    proxy = make_proxy(upstream.url, body_timeout=2.0)
    got: list[bytes] = []
    head = b'POST /v1/messages HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 1000\r\n\r\n{"model"'
    thread = threading.Thread(target=lambda: got.append(raw_exchange(proxy, head, stall=True)))
    thread.start()
    time.sleep(0.1)
    assert loopback.get(proxy + "/healthz").status_code == 200
    assert loopback.post(proxy + "/v1/messages", json=REQUEST).status_code == 200
    assert got == []  # answered while the other body was still pending, not after its 408
    thread.join(10)
    assert got[0].startswith(b"HTTP/1.1 408 ")
    assert b"did not arrive within 2s" in got[0]
    assert len(upstream.requests) == 1


# ---------------------------------------------------------------- bounded SSE events
def endless_event(total: int) -> Callable[[], Iterator[bytes]]:
    def body() -> Iterator[bytes]:
        yield from sse(("message_start", {"message": {"id": "m", "content": []}}))
        yield b'event: content_block_delta\ndata: {"type":"content_block_delta","x":"'
        piece = b"x" * 65536
        for _ in range(total // len(piece)):
            yield piece

    return body


def test_an_oversized_sse_event_closes_a_rewritten_stream_with_one_error(
    make_proxy: MakeProxy, canned: Canned
) -> None:
    canned.reply = Reply(content_type="text/event-stream", body=endless_event(96 << 20))
    proxy = make_proxy(canned.url, max_sse_event_bytes=1 << 20)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    r = loopback.post(proxy + "/v1/messages", json={**REQUEST, "stream": True}, timeout=30)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert r.status_code == 200
    assert r.text.count("event: error") == 1
    assert "exceeded 1048576 bytes" in r.text
    assert len(r.content) < 2 << 20  # the event itself was never sent on
    assert grown_mb < 40


def test_an_oversized_sse_event_passes_through_unbuffered_when_not_rewritten(
    make_proxy: MakeProxy, canned: Canned
) -> None:
    canned.reply = Reply(content_type="text/event-stream", body=endless_event(8 << 20))
    proxy = make_proxy(canned.url, max_sse_event_bytes=1 << 20)
    with loopback.stream(
        "POST", proxy + "/v1/messages", json={**REQUEST, "model": "gpt-4o", "stream": True}
    ) as r:
        size = sum(len(c) for c in r.iter_raw())
    assert size > 8 << 20


# ---------------------------------------------------------------- one error event
@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "gpt-4o"])  # rewritten, untouched
def test_the_upstreams_error_event_reaches_the_client_exactly_once(
    make_proxy: MakeProxy, canned: Canned, model: str
) -> None:
    events = sse(
        ("message_start", {"message": {"id": "m", "content": []}}),
        ("error", {"error": {"type": "overloaded_error", "message": "Overloaded"}}),
    )
    canned.reply = Reply(content_type="text/event-stream", body=events)
    proxy = make_proxy(canned.url)
    r = loopback.post(proxy + "/v1/messages", json={**REQUEST, "model": model, "stream": True})
    assert r.text.count("event: error") == 1
    assert "overloaded_error" in r.text
    assert r.content == b"".join(events)


# ---------------------------------------------------------------- private logs
def test_the_debug_log_is_created_owner_only(
    make_proxy: MakeProxy, upstream: FakeUpstream, tmp_path: Path
) -> None:
    path = tmp_path / "debug.jsonl"
    proxy = make_proxy(upstream.url, debug_log=str(path))
    loopback.post(proxy + "/v1/messages", json=REQUEST)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
