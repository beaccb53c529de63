"""A third upstream kind, added in this one module: registered, it is spelled in
``serve``'s settings and a route's ``upstream:``, serves requests through a real app on
loopback, answers ``/readyz`` and is closed with the worker, with no source module edited
(docs/proxy.md#upstream-kinds).

The oracle is the HTTP kind: the same request through the same rules must reach the toy
as the same bytes it reaches a plain HTTP upstream with, and the client (the official
SDK) must get the toy's answer back with its own tool names, as from an HTTP upstream."""

from __future__ import annotations

import json
from collections.abc import Coroutine, Iterator, Mapping
from typing import Any

import anthropic
import pytest
from canned import Canned
from servers import running_app
from tests.proxy import loopback

from bridge_rules.proxy import ProxyConfig, create_app
from bridge_rules.proxy.config import ServeSettings
from bridge_rules.proxy.forward import Exchange
from bridge_rules.proxy.kinds import Problem, Upstream, UpstreamKind, register, unregister
from bridge_rules.proxy.ops import with_ops
from bridge_rules.proxy.reply import JSON
from bridge_rules.proxy.routespec import RouteSpec

PREFIX = "toy:"


class ToyUpstream:
    """Answers every request itself: a message that calls the first tool it was offered."""

    def __init__(self, config: ProxyConfig) -> None:
        self.name = config.upstream[len(PREFIX) :]
        self.bodies: list[bytes] = []
        self.prepared = self.closed = False

    def prepare(self) -> None:
        self.prepared = True

    def send(self, ex: Exchange, rewritten: bool) -> Coroutine[Any, Any, None]:
        return self._answer(ex)

    async def _answer(self, ex: Exchange) -> None:
        self.bodies.append(ex.body)
        tool = json.loads(ex.body)["tools"][0]["name"]
        call = {"type": "tool_use", "id": "toolu_1", "name": tool, "input": {"path": "a"}}
        message = {"id": "m", "type": "message", "role": "assistant", "model": self.name,
                   "content": [call], "stop_reason": "tool_use",
                   "usage": {"input_tokens": 1, "output_tokens": 1}}  # fmt: skip
        if ex.turn is not None:  # the rules rewrote the request: the answer comes back
            message = ex.turn.message(message)
        await ex.reply.full(200, [(b"content-type", JSON)], json.dumps(message).encode())

    async def readiness(self) -> str | None:
        return None if self.name != "down" else "the toy is down"

    async def aclose(self) -> None:
        self.closed = True


OPENED: list[ToyUpstream] = []


class ToyKind(UpstreamKind):
    spelled = "toy:NAME"

    def claims(self, value: str) -> bool:
        return value.startswith(PREFIX)

    def problems(self, value: str, options: Mapping[str, Any]) -> tuple[str, list[Problem]]:
        if value == PREFIX:
            return value, [("upstream", "--upstream toy: needs a NAME", False)]
        return value, []

    def route_problem(self, value: str) -> str | None:
        return "upstream toy: needs a NAME" if value == PREFIX else None

    def open(self, config: ProxyConfig) -> Upstream:
        OPENED.append(ToyUpstream(config))
        return OPENED[-1]


@pytest.fixture(autouse=True)
def toy() -> Iterator[None]:
    register(ToyKind)
    OPENED.clear()
    yield
    unregister(ToyKind)


TOOLS = [{"name": t, "input_schema": {"type": "object"}} for t in ("read", "write")]
REQUEST = {"model": "claude-sonnet-4-6", "max_tokens": 9,
           "messages": [{"role": "user", "content": "hi"}], "tools": TOOLS}  # fmt: skip

BODY = json.dumps(REQUEST).encode()
TYPED = {"content-type": "application/json"}


def test_the_toy_kind_serves_through_a_real_app_as_an_http_upstream_would() -> None:
    config = ProxyConfig(upstream="toy:alpha")
    app = create_app(config)
    (toy,) = OPENED
    with running_app(with_ops(app, config.upstream)) as url:
        assert toy.prepared
        client = anthropic.Anthropic(base_url=url, api_key="k", max_retries=0, timeout=30)
        answer = client.messages.create(**REQUEST)  # type: ignore[call-overload]
        assert answer.model == "alpha"
        assert [b.name for b in answer.content if b.type == "tool_use"] == ["read"]
        assert loopback.get(url + "/readyz").json()["upstream"] == "reachable"
        loopback.post(url + "/v1/messages", content=BODY, headers=TYPED)
    assert toy.closed
    with Canned() as http, running_app(create_app(ProxyConfig(upstream=http.url))) as url:
        loopback.post(url + "/v1/messages", content=BODY, headers=TYPED)
        assert toy.bodies[-1] == http.seen[-1].body  # the rules' rewrite, byte for byte
    assert json.loads(toy.bodies[-1])["tools"][0]["name"] == "Read"


def test_a_route_holds_a_toy_upstream_beside_an_http_one() -> None:
    with Canned() as http:
        routes = (RouteSpec("toy", upstream="toy:beta"), RouteSpec("web", upstream=http.url))
        config = ProxyConfig(upstream=http.url, routes=routes)
        with running_app(create_app(config)) as url:
            r = loopback.post(url + "/r/toy/v1/messages", json=REQUEST)
            assert r.json()["model"] == "beta"
            assert not http.seen
            loopback.post(url + "/r/web/v1/models", json=REQUEST)
            assert http.seen[-1].path == "/v1/models"
    assert [t.name for t in OPENED if t.closed] == ["beta"]


def test_readiness_is_the_kinds_own() -> None:
    config = ProxyConfig(upstream="toy:down")
    with running_app(with_ops(create_app(config), config.upstream)) as url:
        r = loopback.get(url + "/readyz")
    assert r.status_code == 503
    assert r.json()["upstream"] == "unreachable: the toy is down"


def test_the_kind_reports_its_own_problems_and_is_listed_among_the_kinds() -> None:
    from tests.proxy.test_serve_settings import GOOD

    settings, problems = ServeSettings.check({**GOOD, "upstream": "toy:"}, environ={})
    assert settings is None
    assert [p.message for p in problems] == ["--upstream toy: needs a NAME"]
    settings, problems = ServeSettings.check({**GOOD, "upstream": "toy:x"}, environ={})
    assert settings is not None
    assert settings.config.upstream == "toy:x"
    assert problems == []

    from bridge_rules.proxy.kinds import route_problem

    assert route_problem("toy:") == "upstream toy: needs a NAME"
    assert route_problem("ftp://x") == (
        "upstream must be an http(s) URL or toy:NAME or claude-code, got 'ftp://x'"
    )
    unregister(ToyKind)
    assert (
        route_problem("ftp://x") == "upstream must be an http(s) URL or claude-code, got 'ftp://x'"
    )


def test_no_module_but_the_kinds_own_compares_a_kinds_name() -> None:
    """GNU grep, not the code's own view of itself: outside a kind's module, no comparison
    with ``claude-code`` (or its constant) is left anywhere in the proxy."""
    import subprocess
    from pathlib import Path

    proxy = Path(__file__).resolve().parents[2] / "src" / "bridge_rules" / "proxy"
    name = r"""(CLAUDE_CODE|["']claude-code["'])"""
    pattern = rf"(==|!=|\bin\b|\bis\b)\s*{name}|{name}\s*(==|!=)"
    found = subprocess.run(
        ["/usr/bin/grep", "-rnE", "--include=*.py", pattern, str(proxy)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert found.returncode in (0, 1), found.stderr
    lines = [line for line in found.stdout.splitlines() if "/claude_code/kind.py:" not in line]
    assert lines == []
    assert "/claude_code/kind.py:" in found.stdout  # the kind's own spelling: grep sees it
