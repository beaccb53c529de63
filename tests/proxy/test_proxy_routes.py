"""``routes:`` in ``serve --config``: two agents through one proxy, each route with its own
rules, upstream and policy, picked by path prefix, header or model id, in that order."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from canned import TEXT_ANSWER, Canned
from servers import running_app
from tests.proxy import loopback

from bridge_rules.proxy import ProxyConfig, create_app
from bridge_rules.proxy.obs import ACCESS_LOGGER
from bridge_rules.proxy.ops import with_ops
from bridge_rules.proxy.routes import make_upstream
from bridge_rules.proxy.routespec import RouteSpec
from bridge_rules.proxy.settingsfile import read_settings


@pytest.fixture
def pi() -> Iterator[Canned]:
    with Canned() as server:
        server.reply.body = [TEXT_ANSWER]
        yield server


@pytest.fixture
def oc() -> Iterator[Canned]:
    with Canned() as server:
        server.reply.body = [TEXT_ANSWER]
        yield server


def request(model: str = "claude-sonnet-4-5") -> dict[str, Any]:
    tools = [{"name": t, "input_schema": {"type": "object"}} for t in ("read", "write")]
    return {"model": model, "max_tokens": 9,
            "messages": [{"role": "user", "content": "hi"}], "tools": tools}  # fmt: skip


def tools_seen(server: Canned) -> list[str]:
    return [t["name"] for t in json.loads(server.seen[-1].body)["tools"]]


def config(pi: Canned, oc: Canned, *, default: bool = True, rules: str = "") -> ProxyConfig:
    routes = (
        RouteSpec("pi", upstream=pi.url, policy=("read_only",), rules=(rules,) if rules else ()),
        RouteSpec("oc", upstream=oc.url, model="claude-opus-*", default=default),
    )
    return ProxyConfig(upstream=pi.url, routes=routes)


def test_a_path_prefix_picks_the_route_and_is_taken_off(pi: Canned, oc: Canned) -> None:
    with running_app(create_app(config(pi, oc))) as proxy:
        r = loopback.post(proxy + "/r/pi/v1/messages", json=request())
        assert r.status_code == 200
        assert pi.seen[-1].path == "/v1/messages"
        assert tools_seen(pi) == ["Read"]
        loopback.post(proxy + "/r/oc/v1/messages", json=request())
        assert tools_seen(oc) == ["Read", "Write"]


def test_header_then_model_then_default(pi: Canned, oc: Canned) -> None:
    with running_app(create_app(config(pi, oc))) as proxy:
        loopback.post(
            proxy + "/v1/messages", json=request("claude-opus-4-1"),
            headers={"x-bridge-rules-route": "pi"},
        )  # fmt: skip
        assert len(pi.seen) == 1
        assert not oc.seen
        loopback.post(proxy + "/v1/messages", json=request("claude-opus-4-1"))
        assert len(oc.seen) == 1
        loopback.post(proxy + "/v1/messages", json=request("claude-haiku-4-5"))
        assert len(oc.seen) == 2  # the default


def test_no_route_and_no_default_is_a_404_listing_the_routes(pi: Canned, oc: Canned) -> None:
    with running_app(create_app(config(pi, oc, default=False))) as proxy:
        r = loopback.post(proxy + "/v1/messages", json=request())
        unknown = loopback.post(proxy + "/r/nope/v1/messages", json=request())
    assert r.status_code == 404
    assert "/r/pi/, /r/oc/" in r.json()["error"]["message"]
    assert unknown.status_code == 404
    assert "no route named 'nope'" in unknown.json()["error"]["message"]
    assert not pi.seen
    assert not oc.seen


def test_a_header_cannot_widen_a_routes_policy(pi: Canned, oc: Canned) -> None:
    with running_app(create_app(config(pi, oc))) as proxy:
        loopback.post(
            proxy + "/r/pi/v1/messages", json=request(), headers={"x-bridge-rules-policy": "no_web"}
        )
        assert tools_seen(pi) == ["Read"]
        loopback.post(
            proxy + "/r/oc/v1/messages",
            json=request(),
            headers={"x-bridge-rules-policy": "read_only"},
        )
        assert tools_seen(oc) == ["Read"]


def test_each_route_has_its_metrics_label_and_log_field(
    pi: Canned, oc: Canned, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("INFO", logger=ACCESS_LOGGER)
    with running_app(with_ops(create_app(config(pi, oc)), pi.url)) as proxy:
        loopback.post(proxy + "/r/pi/v1/messages", json=request())
        text = loopback.scrape(proxy, 'bridge_rules_route_requests_total{rules_route="pi"')
        ready = loopback.get(proxy + "/readyz").json()
    assert sorted(ready["routes"]) == ["oc", "pi"]
    assert 'bridge_rules_route_requests_total{rules_route="pi",status="2xx"} 1.0' in text
    assert 'bridge_rules_requests_total{route="/v1/messages",status="2xx"} 1.0' in text
    logged = [json.loads(r.getMessage()) for r in caplog.records if r.name == ACCESS_LOGGER]
    assert [line.get("route") for line in logged] == ["pi"]


def test_a_route_whose_rules_fail_to_reload_keeps_them(
    pi: Canned, oc: Canned, tmp_path: Path
) -> None:
    rules = tmp_path / "pi.yaml"
    rules.write_text("bridge-rules: 1\nextends: default\n", encoding="utf-8")
    app = create_app(config(pi, oc, rules=str(rules)))
    before = app.routes_status
    assert before is not None
    rules.write_text("bridge-rules: 1\nextends: default\ngate: [\n", encoding="utf-8")
    assert app.reload_routes() == ["pi"]
    after = app.routes_status
    assert after is not None
    assert after["pi"]["rules_hash"] == before["pi"]["rules_hash"]
    assert "reload_failed" in after["pi"]
    assert "reload_failed" not in after["oc"]
    with running_app(app) as proxy:
        assert loopback.post(proxy + "/r/pi/v1/messages", json=request()).status_code == 200
    rules.write_text("bridge-rules: 1\nextends: default\n# changed\n", encoding="utf-8")
    assert app.reload_routes() == []
    again = app.routes_status
    assert again is not None
    assert "reload_failed" not in again["pi"]
    assert again["pi"]["rules_hash"] != before["pi"]["rules_hash"]


def test_routes_are_read_from_the_settings_file(tmp_path: Path) -> None:
    path = tmp_path / "serve.yaml"
    path.write_text(
        "upstream: http://127.0.0.1:9\nroutes:\n"
        "  - {name: pi, upstream: 'http://127.0.0.1:8001', policy: read_only}\n"
        "  - {name: oc, model: 'claude-opus-*', default: true, target: gemini}\n",
        encoding="utf-8",
    )
    found = read_settings(str(path), {"upstream": False})
    assert not found.problems
    assert found.routes == (
        RouteSpec("pi", upstream="http://127.0.0.1:8001", policy=("read_only",)),
        RouteSpec("oc", model="claude-opus-*", default=True, target="gemini"),
    )


@pytest.mark.parametrize(
    ("routes", "problem"),
    [
        ("  - {name: a, upstream: 'ftp://x'}\n", "upstream must be an http(s) URL"),
        ("  - {name: a}\n  - {name: a}\n", "two routes are named 'a'"),
        ("  - {name: a, default: true}\n  - {name: b, default: true}\n", "only one route"),
        ("  - {name: a, polcy: [read_only]}\n", "unknown route key 'polcy'"),
        ("  - {name: a, target: cobol}\n", "unknown schema target 'cobol'"),
        ("  - {name: 'a b'}\n", "a route needs a name"),
    ],
)
def test_a_bad_route_is_a_located_problem(tmp_path: Path, routes: str, problem: str) -> None:
    path = tmp_path / "serve.yaml"
    path.write_text("routes:\n" + routes, encoding="utf-8")
    found = read_settings(str(path), {"upstream": False})
    lines = [p.line() for p in found.problems]
    assert any(problem in line and "serve.yaml:" in line for line in lines), lines


def test_routes_survive_the_trip_to_a_worker(
    pi: Canned, oc: Canned, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = config(pi, oc)
    monkeypatch.setenv("BRIDGE_RULES_SERVE_CONFIG", cfg.to_env())
    assert ProxyConfig.from_env() == cfg


def test_the_documented_two_agent_settings_serve(tmp_path: Path) -> None:
    """docs/proxy.md's ``two-agents.yaml`` reads cleanly and builds both routes."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "proxy.md").read_text("utf-8")
    block = page.split("# two-agents.yaml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "two-agents.yaml"
    path.write_text(block, encoding="utf-8")
    found = read_settings(str(path), {"upstream": False, "port": False, "rules": True})
    assert not found.problems
    assert [r.name for r in found.routes] == ["pi", "opencode"]
    config = ProxyConfig(upstream=found.values["upstream"], routes=found.routes)
    status = create_app(config).routes_status
    assert status is not None
    assert sorted(status) == ["opencode", "pi"]


def test_a_claude_code_route_is_answered_by_the_cli(pi: Canned) -> None:
    pytest.importorskip("claude_agent_sdk")
    config = ProxyConfig(upstream=pi.url)
    http, cli = make_upstream(config, RouteSpec("cc", upstream="claude-code"))
    assert cli is not None
    http, none = make_upstream(config, RouteSpec("web", upstream=pi.url))
    assert none is None
    assert http.base == pi.url
