"""Hostile HTTP against the proxy, class by class of RFC 9110/9112 behaviour (issue 26):
Expect, request targets, URL userinfo, status codes, content codings, media types, body
caps, HTTP/1.0. Each case is answered with a clear error or a correct pass-through; the
table in docs/proxy.md ("HTTP edge cases") says which, class by class.
"""

from __future__ import annotations

import gzip
import json
import socket
import threading
import time
import zlib
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from tests.hostile.http_kit import (
    READ_CALL,
    REQUEST,
    Lost,
    address,
    counted,
    exchange,
    proxies,
    raw_upstream,
    read_all,
    status_of,
    upstream,
)
from tests.ports import free_port
from tests.proxy import loopback
from tests.proxy.canned import Canned, Reply

from bridge_rules.cli.app import click_command
from bridge_rules.proxy.config import ServeSettings

BODY = json.dumps(REQUEST).encode()


def post(path: str = "/v1/messages", headers: bytes = b"", body: bytes = BODY) -> bytes:
    return (
        b"POST %s HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        b"content-length: %d\r\nconnection: close\r\n%s\r\n%s"
        % (path.encode(), len(body), headers, body)
    )


def read_name(answer: httpx.Response | bytes) -> str:
    """The tool name in a JSON answer; ``read`` when the proxy mapped it back."""
    text = answer.content if isinstance(answer, httpx.Response) else answer
    return str(json.loads(text.partition(b"\r\n\r\n")[2] or text)["content"][0]["name"])


# ---------------------------------------------------------------- Expect
class _NoContinue(Canned):
    """An upstream that never sends ``100 Continue`` (it reads the body regardless)."""

    def __init__(self) -> None:
        super().__init__()
        self.RequestHandlerClass.handle_expect_100 = lambda handler: True  # type: ignore[attr-defined]


def test_expect_100_continue_is_met_by_the_proxy_not_forwarded() -> None:
    with counted(), _NoContinue() as up, proxies() as make:
        up.reply = Reply(body=[READ_CALL])
        proxy = make(up.url, timeout=5)
        started = time.monotonic()
        with socket.create_connection(address(proxy), timeout=10) as sock:
            sock.sendall(post(headers=b"expect: 100-continue\r\n")[: -len(BODY)])
            head = sock.recv(4096)
            assert head.startswith(b"HTTP/1.1 100 Continue"), head
            sock.sendall(BODY)
            answer = head.partition(b"\r\n\r\n")[2] + read_all(sock)
        assert time.monotonic() - started < 5
        assert status_of(answer) == 200
        if read_name(answer) != "read":
            raise Lost(answer)
        assert up.seen[0].header("expect") == []


def test_an_expectation_other_than_100_continue_gets_417() -> None:
    with counted(), upstream() as up, proxies() as make:
        answer = exchange(make(up.url), post(headers=b"expect: 200-ok\r\n"))
        assert status_of(answer) == 417
        assert b"100-continue" in answer
        assert up.seen == []


def test_a_body_too_large_is_refused_before_100_continue() -> None:
    with counted(), upstream() as up, proxies() as make:
        request = post(headers=b"expect: 100-continue\r\n", body=b"x" * 2000)[:-2000]
        answer = exchange(make(up.url, max_body_bytes=1000), request, timeout=5)
        assert answer.startswith(b"HTTP/1.1 413 "), answer  # no 100 Continue before it
        assert up.seen == []


def test_an_http_1_0_expectation_is_ignored() -> None:
    with counted(), upstream() as up, proxies() as make:
        up.reply = Reply(body=[READ_CALL])
        request = post(headers=b"expect: 100-continue\r\n").replace(b"HTTP/1.1", b"HTTP/1.0", 1)
        answer = exchange(make(up.url), request)
        assert b"100 Continue" not in answer
        assert status_of(answer) == 200


class _NeverReads:
    """An upstream that accepts, reads a little, and then neither reads nor answers."""

    def __enter__(self) -> str:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()
        return f"http://127.0.0.1:{self.server.getsockname()[1]}"

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            conn.recv(1024)
            self.held.append(conn)

    def __exit__(self, *exc: object) -> None:
        self.server.close()
        for conn in self.held:
            conn.close()


def test_an_upstream_that_never_reads_the_body_is_a_504_within_the_timeout() -> None:
    with counted(), _NeverReads() as up, proxies() as make:
        started = time.monotonic()
        r = loopback.post(make(up, timeout=1) + "/v1/models", content=b"x" * (16 << 20), timeout=15)
        assert r.status_code == 504
        assert "did not take the request body within 1s" in r.json()["error"]["message"]
        assert time.monotonic() - started < 5


def test_a_large_body_goes_upstream_whole_with_its_length() -> None:
    with counted(), upstream() as up, proxies() as make:
        up.reply = Reply(body=[READ_CALL])
        big = {**REQUEST, "messages": [{"role": "user", "content": "x" * (3 << 20)}]}
        r = loopback.post(make(up.url, timeout=2) + "/v1/messages", json=big, timeout=15)
        assert r.status_code == 200
        seen = up.seen[0]
        assert seen.header("transfer-encoding") == []
        assert seen.header("content-length") == [str(len(seen.body))]
        if json.loads(seen.body)["messages"][0]["content"] != "x" * (3 << 20):
            raise Lost("the body went upstream changed")


# ---------------------------------------------------------------- request targets
def test_options_asterisk_is_answered_by_the_proxy() -> None:
    with counted(), upstream() as up, proxies() as make:
        answer = exchange(
            make(up.url), b"OPTIONS * HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n"
        )
        assert status_of(answer) == 200
        assert b"\r\nallow: GET, HEAD, POST, OPTIONS\r\n" in answer
        assert up.seen == []


@pytest.mark.parametrize("method", [b"GET", b"POST", b"DELETE"])
def test_an_asterisk_target_with_another_method_is_a_400(method: bytes) -> None:
    with counted(), upstream() as up, proxies() as make:
        request = method + b" * HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 0\r\n\r\n"
        answer = exchange(make(up.url), request)
        assert status_of(answer) == 400
        assert b"only for OPTIONS" in answer
        assert up.seen == []


def test_an_absolute_form_target_is_forwarded_by_its_path() -> None:
    with counted(), upstream() as up, proxies() as make:
        up.reply = Reply(body=[b"{}"])
        target = b"http://elsewhere.example/v1/models?x=1"
        request = b"GET %s HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n" % target
        assert status_of(exchange(make(up.url), request)) == 200
        assert up.seen[0].path == "/v1/models?x=1"


# ---------------------------------------------------------------- URL userinfo
def test_serve_refuses_credentials_in_the_upstream_url() -> None:
    with counted():
        options = {
            "upstream": "http://user:pass@127.0.0.1:1", "rules": None, "host": "127.0.0.1",
            "port": 8787, "workers": 1, "max_body_bytes": 1, "timeout": 1.0, "max_headers": 1,
            "max_header_bytes": 1, "body_timeout": 1.0, "max_sse_event_bytes": 1,
            "outbound_cache_mb": 0, "upstream_keepalive": 0.0, "header_timeout": 1.0,
            "max_connections": 0, "max_response_bytes": 1, "debug_log": None,
            "log_prompts": False,
        }  # fmt: skip
        settings, problems = ServeSettings.check(options, environ={})
        assert settings is None
        assert "--upstream takes no user name or password" in problems[0].message


def test_serve_with_credentials_in_the_upstream_url_is_a_usage_error() -> None:
    with counted():
        args = ["serve", "--upstream", "https://user:secret@api.example.com"]
        result = CliRunner().invoke(click_command(), args)
        assert result.exit_code == 2
        assert "--upstream takes no user name or password" in result.output


@pytest.mark.parametrize("client_auth", [None, "Bearer client-token"])
def test_userinfo_in_a_library_config_never_becomes_a_header(client_auth: str | None) -> None:
    with counted(), upstream() as up, proxies() as make:
        up.reply = Reply(body=[READ_CALL])
        host, port = address(up.url)
        proxy = make(f"http://user:pass@{host}:{port}")
        headers = {"authorization": client_auth} if client_auth else {}
        r = loopback.post(proxy + "/v1/messages", json=REQUEST, headers=headers, timeout=10)
        assert r.status_code == 200, r.text
        assert up.seen[0].header("authorization") == ([client_auth] if client_auth else [])


def test_an_upstream_that_is_down_is_a_502() -> None:
    with counted(), proxies() as make:
        port = free_port()
        r = loopback.post(make(f"http://user:pass@127.0.0.1:{port}") + "/v1/messages", json=REQUEST)
        assert r.status_code == 502
        assert r.json()["error"]["message"].startswith("cannot reach the upstream")


# ---------------------------------------------------------------- status codes
@pytest.mark.parametrize("status", [600, 999])
@pytest.mark.parametrize("path", ["/v1/messages", "/v1/models"])
def test_a_status_http_does_not_define_is_a_502(status: int, path: str) -> None:
    with counted(), upstream() as up, proxies() as make:
        up.reply = Reply(status=status, body=[READ_CALL])
        r = loopback.post(make(up.url) + path, json=REQUEST, timeout=10)
        assert r.status_code == 502
        assert f"status {status}" in r.json()["error"]["message"]


@pytest.mark.parametrize("status", [203, 299, 420, 599])
def test_an_unusual_but_valid_status_is_passed_on(status: int) -> None:
    with counted(), upstream() as up, proxies() as make:
        up.reply = Reply(status=status, body=[b'{"x":1}'])
        r = loopback.get(make(up.url) + "/v1/models", timeout=10)
        assert (r.status_code, r.content) == (status, b'{"x":1}')


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    "head", [b"204 No Content", b"304 Not Modified\r\ncontent-type: text/event-stream"]
)
def test_an_answer_that_has_no_body_gets_none_added(head: bytes, stream: bool) -> None:
    with counted(), raw_upstream(b"HTTP/1.1 " + head + b"\r\n\r\n") as up, proxies() as make:
        body = json.dumps({**REQUEST, "stream": stream}).encode()
        answer = exchange(make(up), post(body=body))
        assert status_of(answer) == int(head[:3])
        assert answer.endswith(b"\r\n\r\n")  # headers only: no error event, no chunk


@pytest.mark.parametrize("interim", [b"100 Continue", b"103 Early Hints\r\nlink: </a>"])
def test_an_interim_answer_before_the_final_one_is_not_forwarded(interim: bytes) -> None:
    answer = b"HTTP/1.1 %s\r\n\r\nHTTP/1.1 200 OK\r\ncontent-type: application/json\r\n" % interim
    answer += b"content-length: %d\r\n\r\n%s" % (len(READ_CALL), READ_CALL)
    with counted(), raw_upstream(answer) as up, proxies() as make:
        got = exchange(make(up), post())
        assert got.startswith(b"HTTP/1.1 200 OK\r\n")
        if read_name(got) != "read":
            raise Lost(got)


def test_a_101_nobody_asked_for_is_a_502() -> None:
    switching = b"HTTP/1.1 101 Switching Protocols\r\nupgrade: x\r\nconnection: upgrade\r\n\r\n"
    with counted(), raw_upstream(switching) as up, proxies() as make:
        assert status_of(exchange(make(up), post())) == 502


# ---------------------------------------------------------------- content codings
def _gzip(data: bytes) -> bytes:
    return gzip.compress(data)


def _deflate(data: bytes) -> bytes:
    return zlib.compress(data)


@pytest.mark.parametrize(
    ("coding", "encode"),
    [
        ("gzip", _gzip),
        ("x-gzip", _gzip),
        ("GZIP", _gzip),
        ("deflate", _deflate),
        ("deflate, gzip", lambda d: _gzip(_deflate(d))),
        ("identity, gzip", _gzip),
    ],
)
def test_an_encoded_answer_is_decoded_and_rewritten(coding: str, encode: Any) -> None:
    with counted(), upstream() as up, proxies() as make:
        up.reply = Reply(headers=[("content-encoding", coding)], body=[encode(READ_CALL)])
        r = loopback.post(make(up.url) + "/v1/messages", json=REQUEST, timeout=10)
        assert r.status_code == 200
        assert "content-encoding" not in r.headers
        if read_name(r) != "read":
            raise Lost(r.content)


@pytest.mark.parametrize("coding", ["compress", "gzip, br", "zstd", "made-up"])
def test_an_answer_in_a_coding_the_proxy_cannot_undo_passes_through_with_its_header(
    coding: str,
) -> None:
    with counted(), upstream() as up, proxies() as make:
        opaque = b"\x1f\x9d opaque bytes the proxy cannot decode"
        up.reply = Reply(headers=[("content-encoding", coding)], body=[opaque])
        answer = exchange(make(up.url), post())
        head, _, body = answer.partition(b"\r\n\r\n")
        assert status_of(answer) == 200
        assert f"content-encoding: {coding}".encode() in head
        if opaque not in body:  # chunked framing around it, the bytes as sent
            raise Lost(answer)


def test_a_corrupt_gzip_answer_is_a_502() -> None:
    with counted(), upstream() as up, proxies() as make:
        up.reply = Reply(headers=[("content-encoding", "gzip")], body=[b"not gzip at all"])
        r = loopback.post(make(up.url) + "/v1/messages", json=REQUEST, timeout=10)
        assert r.status_code == 502
        assert "not valid gzip" in r.json()["error"]["message"]


# ---------------------------------------------------------------- caps on buffered bodies
def test_a_json_answer_over_the_cap_is_a_502_without_buffering_it() -> None:
    def huge() -> Any:
        yield b'{"content":["'
        for _ in range(200):
            yield b"x" * (1 << 20)  # 200 MiB, never held whole

    with counted(), upstream() as up, proxies() as make:
        up.reply = Reply(body=huge)
        proxy = make(up.url, max_response_bytes=4 << 20)
        r = loopback.post(proxy + "/v1/messages", json=REQUEST, timeout=20)
        assert r.status_code == 502
        assert "--max-response-bytes" in r.json()["error"]["message"]


def test_a_gzip_bomb_is_stopped_at_the_cap() -> None:
    bomb = gzip.compress(b"\0" * (64 << 20))  # 64 KiB that decode to 64 MiB
    with counted(), upstream() as up, proxies() as make:
        up.reply = Reply(headers=[("content-encoding", "gzip")], body=[bomb])
        r = loopback.post(make(up.url, max_response_bytes=1 << 20) + "/v1/messages", json=REQUEST)
        assert r.status_code == 502


def test_a_request_body_over_the_cap_is_a_413() -> None:
    with counted(), upstream() as up, proxies() as make:
        r = loopback.post(make(up.url, max_body_bytes=100) + "/v1/messages", content=b"x" * 500)
        assert r.status_code == 413
        assert up.seen == []


# ---------------------------------------------------------------- media types, HTTP/1.0
def _stream_reply(content_type: str | None) -> Reply:
    block = {"type": "tool_use", "id": "t", "name": "Read", "input": {}}
    events = [
        ("message_start", {"message": {"id": "m", "content": []}}),
        ("content_block_start", {"index": 0, "content_block": block}),
        ("content_block_delta", {"index": 0, "delta": {"type": "input_json_delta",
                                                       "partial_json": '{"file_path": "a"}'}}),
        ("content_block_stop", {"index": 0}),
        ("message_stop", {}),
    ]  # fmt: skip
    body = [f"event: {n}\ndata: {json.dumps({'type': n, **d})}\n\n".encode() for n, d in events]
    return Reply(content_type=content_type, body=body)


@pytest.mark.parametrize(
    "content_type",
    ["text/event-stream", "Text/Event-Stream", "text/event-stream; charset=utf-8", None],
)
def test_a_stream_is_rewritten_whatever_the_case_and_parameters_of_its_media_type(
    content_type: str | None,
) -> None:
    with counted(), upstream() as up, proxies() as make:
        up.reply = _stream_reply(content_type)
        r = loopback.post(make(up.url) + "/v1/messages", json={**REQUEST, "stream": True})
        assert r.status_code == 200
        if '"name":"read"' not in r.text.replace(" ", "") or "message_stop" not in r.text:
            raise Lost(r.text)


@pytest.mark.parametrize("coding", ["gzip", "x-gzip, identity", "deflate, gzip"])
def test_an_encoded_stream_is_decoded_and_rewritten(coding: str) -> None:
    reply = _stream_reply("text/event-stream")
    whole = b"".join(reply.body) if isinstance(reply.body, list) else b""
    encoded = zlib.compress(whole) if coding.startswith("deflate") else whole
    encoded = gzip.compress(encoded)
    pieces = [encoded[i : i + 7] for i in range(0, len(encoded), 7)]  # split anywhere
    with counted(), upstream() as up, proxies() as make:
        up.reply = Reply(content_type="text/event-stream", headers=[("content-encoding", coding)],
                         body=pieces)  # fmt: skip
        r = loopback.post(make(up.url) + "/v1/messages", json={**REQUEST, "stream": True})
        assert "content-encoding" not in r.headers
        if '"name":"read"' not in r.text.replace(" ", "") or "message_stop" not in r.text:
            raise Lost(r.text)


def test_a_corrupt_encoded_stream_ends_with_one_error_event() -> None:
    with counted(), upstream() as up, proxies() as make:
        up.reply = Reply(content_type="text/event-stream", headers=[("content-encoding", "gzip")],
                         body=[b"\x1f\x8b but not gzip"])  # fmt: skip
        r = loopback.post(make(up.url) + "/v1/messages", json={**REQUEST, "stream": True})
        assert r.status_code == 200
        assert r.text.count("event: error") == 1
        assert "not valid gzip" in r.text


def test_an_http_1_0_client_gets_a_stream_without_chunked_framing() -> None:
    with counted(), upstream() as up, proxies() as make:
        up.reply = _stream_reply("text/event-stream")
        body = json.dumps({**REQUEST, "stream": True}).encode()
        request = post(body=body).replace(b"HTTP/1.1", b"HTTP/1.0", 1)
        answer = exchange(make(up.url), request)
        head, _, rest = answer.partition(b"\r\n\r\n")
        assert status_of(answer) == 200
        assert b"transfer-encoding" not in head.lower()
        assert rest.startswith(b"event: message_start")  # the body as is: no chunk sizes
        if b"message_stop" not in rest or b'"name":"read"' not in rest.replace(b" ", b""):
            raise Lost(rest)


def test_an_http_1_0_client_gets_a_json_answer_with_its_length() -> None:
    with counted(), upstream() as up, proxies() as make:
        up.reply = Reply(body=[READ_CALL])
        answer = exchange(make(up.url), post().replace(b"HTTP/1.1", b"HTTP/1.0", 1))
        head = answer.partition(b"\r\n\r\n")[0].lower()
        assert b"content-length:" in head
        assert b"transfer-encoding" not in head
        if read_name(answer) != "read":
            raise Lost(answer)
