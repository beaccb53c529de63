"""Web pages cannot reach ``serve`` (issue 34.6): a browser's request always carries a
``Host`` and, on a POST, an ``Origin``; the agents send no ``Origin`` and a loopback
``Host``. Tried as a page would: a ``text/plain`` POST (no CORS preflight) with generated
foreign origins and DNS-rebinding host names, against real ``serve`` processes, each
setting written as a flag, an environment variable and a ``--config`` key, and against
the ``claude-code`` upstream. The oracle: what the loopback upstream receives (nothing,
when refused) and the status the page gets."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anthropic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.budget import examples
from tests.hostile.http_kit import READ_CALL, REQUEST, exchange, status_of
from tests.proxy.canned import Canned

SETTINGS = settings(
    max_examples=examples(80), deadline=None, suppress_health_check=list(HealthCheck)
)
LABEL = st.from_regex(r"[a-z][a-z0-9-]{0,12}[a-z0-9]", fullmatch=True)
NAME = st.lists(LABEL, min_size=2, max_size=4).map(".".join)
PORT = st.one_of(st.just(""), st.integers(1, 65535).map(lambda p: f":{p}"))


@contextmanager
def serve(*options: str, env: dict[str, str] | None = None) -> Iterator[tuple[Canned, str]]:
    from serve_process import serving  # tests/e2e, on the path once http_kit is imported

    saved = dict(os.environ)
    os.environ.update(env or {})
    try:
        with Canned() as up:
            up.reply.body = [READ_CALL]
            with serving("--upstream", up.url, *options) as url:
                yield up, url
    finally:
        os.environ.clear()
        os.environ.update(saved)


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[Canned, str]]:
    with serve() as both:
        yield both


def page_post(url: str, host: str, origin: str | None, path: str = "/v1/messages") -> bytes:
    """What a web page's ``fetch(..., {method: "POST", body})`` sends: text/plain."""
    body = (
        b'{"model":"claude-sonnet-4-5","max_tokens":5,"messages":[{"role":"user","content":"x"}]}'
    )
    head = f"POST {path} HTTP/1.1\r\nhost: {host}\r\ncontent-type: text/plain;charset=UTF-8\r\n"
    if origin is not None:
        head += f"origin: {origin}\r\n"
    head += f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    return exchange(url, head.encode() + body)


def port_of(url: str) -> str:
    return url.rsplit(":", 1)[1]


@SETTINGS
@given(name=NAME, port=PORT, scheme=st.sampled_from(["http", "https"]), same=st.booleans())
def test_a_page_with_any_origin_is_refused(
    served: tuple[Canned, str], name: str, port: str, scheme: str, same: bool
) -> None:
    up, url = served
    since = len(up.seen)
    host = f"127.0.0.1:{port_of(url)}" if same else f"{name}{port}"
    answer = page_post(url, host, f"{scheme}://{name}{port}")
    assert status_of(answer) == 403, answer[:300]
    assert b'"permission_error"' in answer
    assert len(up.seen) == since


@SETTINGS
@given(name=NAME, port=PORT, path=st.sampled_from(["/v1/messages", "/healthz", "/readyz",
                                                   "/metrics", "/v1/models"]))  # fmt: skip
def test_a_rebound_host_name_is_refused_on_every_path(
    served: tuple[Canned, str], name: str, port: str, path: str
) -> None:
    up, url = served
    since = len(up.seen)
    answer = page_post(url, f"{name}{port}", None, path)
    assert status_of(answer) == 403, answer[:300]
    assert len(up.seen) == since


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "LOCALHOST.", "[::1]"])
def test_the_agents_spellings_of_loopback_pass(served: tuple[Canned, str], host: str) -> None:
    _, url = served
    answer = page_post(url, f"{host}:{port_of(url)}", None)
    assert status_of(answer) == 200, answer[:300]


@pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")
def test_the_sdk_passes(served: tuple[Canned, str]) -> None:
    _, url = served
    for base in (url, url.replace("127.0.0.1", "localhost")):
        client = anthropic.Anthropic(base_url=base, api_key="k", max_retries=0)
        message = client.messages.create(**REQUEST)  # type: ignore[call-overload]
        assert message.content[0].name == "read"


def test_each_setting_as_a_flag_a_variable_and_a_config_key(tmp_path: Path) -> None:
    config = tmp_path / "serve.yaml"
    config.write_text("allow-origin: [https://cfg.example]\nallow_host: cfg.internal\n")
    env = {"BRIDGE_RULES_ALLOW_ORIGIN": "https://env.example http://env.example:8080",
           "BRIDGE_RULES_ALLOW_HOST": "env.internal"}  # fmt: skip
    with serve("--allow-origin", "https://flag.example", "--allow-host", "flag.internal") as (
        _,
        url,
    ):
        assert status_of(page_post(url, "flag.internal:1", "https://flag.example")) == 200
        assert status_of(page_post(url, "flag.internal:1", "https://FLAG.example/")) == 200
        assert status_of(page_post(url, "other.internal", None)) == 403
        assert status_of(page_post(url, "flag.internal", "https://flag.example:444")) == 403
    with serve(env=env) as (_, url):
        assert status_of(page_post(url, "env.internal", "http://env.example:8080")) == 200
        assert status_of(page_post(url, "env.internal", "https://flag.example")) == 403
    with serve("--config", str(config)) as (_, url):
        assert status_of(page_post(url, "cfg.internal", "https://cfg.example")) == 200
        assert status_of(page_post(url, "cfg.internal", "null")) == 403
    with serve("--allow-origin", "*", "--allow-host", "*") as (_, url):
        assert status_of(page_post(url, "any.where.example", "https://any.example")) == 200


def test_on_every_interface_addresses_pass_and_names_do_not() -> None:
    with serve("--host", "0.0.0.0") as (_, url):
        port = port_of(url)
        assert status_of(page_post(url, f"127.0.0.1:{port}", None)) == 200
        assert status_of(page_post(url, f"192.0.2.7:{port}", None)) == 200
        assert status_of(page_post(url, f"[2001:db8::1]:{port}", None)) == 200
        assert status_of(page_post(url, f"rebind.example:{port}", None)) == 403
        assert status_of(page_post(url, f"192.0.2.7:{port}", "http://192.0.2.7")) == 403


@pytest.mark.parametrize(
    ("flag", "value"),
    [("--allow-origin", "app.example"), ("--allow-origin", "https://a.example/path"),
     ("--allow-host", "https://a.example"), ("--allow-host", "a.example/x")],
)  # fmt: skip
def test_a_bad_value_is_a_usage_error(flag: str, value: str) -> None:
    import subprocess
    import sys

    cli = Path(sys.executable).with_name("bridge-rules")
    args = [str(cli), "serve", "--upstream", "http://127.0.0.1:9", flag, value]
    done = subprocess.run(args, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert f"{flag} takes" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_claude_code_upstream_refuses_pages_too() -> None:
    pytest.importorskip("claude_agent_sdk", reason="the claude-code extra is not installed")
    from servers import running_app

    from bridge_rules.proxy import ProxyConfig, create_app
    from bridge_rules.proxy.config import CLAUDE_CODE

    config = ProxyConfig(upstream=CLAUDE_CODE, claude_path="/nonexistent/claude")
    with running_app(create_app(config), config=config) as url:
        port = port_of(url)
        refused = page_post(url, f"127.0.0.1:{port}", "https://evil.example")
        assert status_of(refused) == 403, refused[:300]
        assert status_of(page_post(url, f"evil.example:{port}", None)) == 403
        assert status_of(page_post(url, f"127.0.0.1:{port}", None)) != 403
