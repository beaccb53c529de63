"""The client-key check from the attacker's side, against a real ``serve --workers 2``.

Every way a request can spell its key (header case, duplicates, ``Bearer`` casing and
spacing, both headers at once, near misses of a good key) and every entry point
(messages, count_tokens, a ``/r/<route>/`` prefix, other forwarded paths, path spellings,
``/metrics``, ``/readyz``): exactly the spellings HTTP says are the same key get in, every
other is a 401 in Anthropic's shape that never goes upstream, and no refusal carries key
material, a key's name or the upstream credential (tests/proxy/clientkeys.py).

The oracle for "the same key" is RFC 9110: header names are case-insensitive (5.1), the
auth scheme is case-insensitive (11.1), and leading and trailing whitespace is not part of
a field value (5.5).
"""

from __future__ import annotations

import http.client
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "e2e"))

from fake_upstream import FakeUpstream
from tests.proxy.clientkeys import Keys, anthropic_error, assert_no_leak
from tests.proxy.test_serve_signals import REQUEST, serving

CREDENTIAL = "sk-ant-hostile-upstream-secret-42"


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Keys, FakeUpstream]]:
    tmp = tmp_path_factory.mktemp("keys")
    keys = Keys(tmp / "keys.yaml", credentials=[CREDENTIAL])
    (tmp / "cred").write_text(CREDENTIAL, encoding="utf-8")
    keys.new("good-team", f"upstream_key: {{file: {tmp / 'cred'}}}\nroutes: [main]")
    keys.new("other-team", "routes: [main]")
    with FakeUpstream() as upstream:
        config = tmp / "serve.yaml"
        config.write_text(
            f"keys: {keys.path}\nroutes:\n  - {{name: main, upstream: '{upstream.url}', "
            "default: true}\n",
            encoding="utf-8",
        )
        with serving(["--config", str(config), "--workers", "2"]) as server:
            yield server.url, keys, upstream


def send(
    url: str, headers: list[tuple[str, str]], path: str = "/v1/messages", method: str = "POST"
) -> httpx.Response:
    """The request with its headers exactly as written (duplicates, whitespace around a
    value: httpx would refuse to send those), through the standard library's client."""
    body = json.dumps(REQUEST).encode()
    conn = http.client.HTTPConnection(urlsplit(url).netloc, timeout=30)
    try:
        conn.putrequest(method, path, skip_accept_encoding=True)
        for name, value in [*headers, ("content-type", "application/json")]:
            conn.putheader(name, value)
        conn.putheader("content-length", str(len(body)))
        conn.endheaders(body)
        answer = conn.getresponse()
        content = answer.read()
        return httpx.Response(answer.status, headers=answer.getheaders(), content=content)
    finally:
        conn.close()


GOOD = "{good}"
SAME_KEY = [
    [("x-api-key", GOOD)],
    [("X-API-KEY", GOOD)],
    [("X-Api-Key", GOOD)],
    [("x-api-key", f"  {GOOD}\t")],
    [("authorization", f"Bearer {GOOD}")],
    [("Authorization", f"bearer {GOOD}")],
    [("AUTHORIZATION", f"BEARER {GOOD}")],
    [("authorization", f"BeArEr   {GOOD}")],
    [("authorization", f"Bearer\t{GOOD}")],
    [("x-api-key", GOOD), ("x-api-key", GOOD)],
    [("x-api-key", GOOD), ("authorization", f"Bearer {GOOD}")],
    [("x-api-key", GOOD), ("authorization", "Basic dXNlcjpwYXNz")],
]
REFUSED = [
    [],
    [("x-api-key", "")],
    [("x-api-key", " ")],
    [("authorization", "Bearer")],
    [("authorization", "Bearer ")],
    [("authorization", GOOD)],  # no scheme
    [("authorization", f"Basic {GOOD}")],
    [("authorization", f"Token {GOOD}")],
    [("authorization", f"Bearer{GOOD}")],
    [("proxy-authorization", f"Bearer {GOOD}")],
    [("x-api-key", "{good_upper}")],
    [("x-api-key", "{good_short}")],
    [("x-api-key", "{good}x")],
    [("x-api-key", "{good_hash}")],
    [("x-api-key", "good-team")],
    [("x-api-key", CREDENTIAL)],
    [("x-api-key", GOOD), ("x-api-key", "brk_wrong")],
    [("x-api-key", "brk_wrong"), ("x-api-key", GOOD)],
    [("x-api-key", GOOD), ("authorization", "Bearer {other}")],
    [("authorization", "Bearer {other}"), ("x-api-key", GOOD)],
    [("authorization", f"Bearer {GOOD}"), ("authorization", "Bearer brk_wrong")],
    [("x-api-key", f"{GOOD}, {GOOD}")],
]


def spelled(keys: Keys, headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    import hashlib

    good, other = keys.made["good-team"], keys.made["other-team"]
    values = {
        "good": good,
        "other": other,
        "good_upper": good.upper(),
        "good_short": good[:-1],
        "good_hash": hashlib.sha256(good.encode()).hexdigest(),
    }
    return [(k, v.format(**values)) for k, v in headers]


@pytest.mark.parametrize("headers", SAME_KEY, ids=repr)
def test_every_spelling_of_the_one_key_gets_in(
    proxy: tuple[str, Keys, FakeUpstream], headers: list[tuple[str, str]]
) -> None:
    url, keys, upstream = proxy
    reply = send(url, spelled(keys, headers))
    assert reply.status_code == 200, reply.text
    sent = upstream.requests[-1]
    assert sent.header("x-api-key") == [CREDENTIAL]
    assert sent.header("authorization") == []


@pytest.mark.parametrize("headers", REFUSED, ids=repr)
def test_every_other_spelling_is_a_401_that_leaks_nothing(
    proxy: tuple[str, Keys, FakeUpstream], headers: list[tuple[str, str]]
) -> None:
    url, keys, upstream = proxy
    count = len(upstream.requests)
    reply = send(url, spelled(keys, headers))
    anthropic_error(reply, 401, "authentication_error")
    assert_no_leak(reply, keys)
    assert len(upstream.requests) == count


ENTRY_POINTS = [
    ("POST", "/v1/messages"),
    ("POST", "/v1/messages/count_tokens"),
    ("POST", "/r/main/v1/messages"),
    ("POST", "/r/main/v1/messages/count_tokens"),
    ("POST", "/r/other/v1/messages"),
    ("GET", "/v1/models"),
    ("GET", "/r/main/v1/models"),
    ("POST", "//v1/messages"),
    ("POST", "/v1/messages/"),
    ("POST", "/v1/./messages"),
    ("POST", "/V1/MESSAGES"),
    ("POST", "/%76%31/messages"),
    ("POST", "/healthz"),
    ("PUT", "/readyz"),
    ("GET", "/metrics"),
    ("HEAD", "/metrics"),
    ("OPTIONS", "/v1/messages"),
    ("DELETE", "/v1/messages"),
]


@pytest.mark.parametrize(("method", "path"), ENTRY_POINTS)
@pytest.mark.parametrize("key", ["none", "wrong", "two"])
def test_every_entry_point_asks_for_the_key(
    proxy: tuple[str, Keys, FakeUpstream], method: str, path: str, key: str
) -> None:
    url, keys, upstream = proxy
    headers = {
        "none": [],
        "wrong": [("x-api-key", "brk_" + "A" * 43)],
        "two": spelled(keys, [("x-api-key", GOOD), ("authorization", "Bearer {other}")]),
    }[key]
    count = len(upstream.requests)
    reply = send(url, headers, path, method)
    assert reply.status_code == 401, (method, path, reply.status_code, reply.text)
    if method != "HEAD":
        anthropic_error(reply, 401, "authentication_error")
    assert_no_leak(reply, keys)
    assert len(upstream.requests) == count


def test_the_open_paths_say_nothing_more(proxy: tuple[str, Keys, FakeUpstream]) -> None:
    url, keys, _ = proxy
    for method, path in [("GET", "/healthz"), ("HEAD", "/healthz"), ("GET", "/readyz")]:
        reply = httpx.request(method, url + path)
        assert reply.status_code == 200
        assert_no_leak(reply, keys)
        if method == "GET":
            assert set(reply.json()) == {"status"}
