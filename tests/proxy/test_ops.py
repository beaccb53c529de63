"""``serve`` for operators: request ids, readiness, metrics, settings from the environment
or a file, the upstream's path, and a port already in use (issue 14, point 5)."""

from __future__ import annotations

import json
import logging
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from doubles import marking_engine
from fake_upstream import FakeUpstream
from servers import running_app
from tests.ports import free_port
from tests.proxy import loopback

from bridge_rules.cli.app import main
from bridge_rules.proxy import ProxyConfig, create_app
from bridge_rules.proxy.config import bind_problem, normalise_upstream
from bridge_rules.proxy.obs import ACCESS_LOGGER
from bridge_rules.proxy.ops import with_ops

REQUEST = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 100,
    "messages": [{"role": "user", "content": "hi"}],
    "tools": [{"name": "read", "input_schema": {"type": "object"}}],
}


def _lines(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    return [json.loads(r.getMessage()) for r in caplog.records if r.name == ACCESS_LOGGER]


@pytest.fixture
def proxy(upstream: FakeUpstream) -> Iterator[str]:
    app = create_app(ProxyConfig(upstream=upstream.url), engine=marking_engine())
    with running_app(with_ops(app, upstream.url)) as url:
        yield url


def test_request_ids_in_the_header_and_on_the_timestamped_access_line(
    proxy: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=ACCESS_LOGGER)
    made = loopback.post(proxy + "/v1/messages", json=REQUEST)
    given = loopback.post(proxy + "/v1/messages", json=REQUEST, headers={"x-request-id": "abc-1"})
    forged = loopback.post(proxy + "/v1/messages", json=REQUEST, headers={"x-request-id": "a b"})
    assert len(made.headers["x-request-id"]) == 32
    assert given.headers["x-request-id"] == "abc-1"
    assert forged.headers["x-request-id"] != "a b"
    deadline = time.monotonic() + 5  # a line is written just after its response has gone
    while len(_lines(caplog)) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    lines = _lines(caplog)
    assert [line["request_id"] for line in lines] == [
        made.headers["x-request-id"],
        "abc-1",
        forged.headers["x-request-id"],
    ]
    assert lines[0]["ts"].endswith("+00:00")
    assert lines[0]["renames"] == {"read": "READ"}


def test_metrics_count_requests_renames_and_errors(proxy: str) -> None:
    loopback.post(proxy + "/v1/messages", json=REQUEST)
    loopback.post(proxy + "/v1/messages", content=b"{broken")
    text = loopback.scrape(proxy, "bridge_rules_errors_total{")
    assert 'bridge_rules_requests_total{route="/v1/messages",status="2xx"} 1.0' in text
    assert 'bridge_rules_requests_total{route="/v1/messages",status="4xx"} 1.0' in text
    assert 'bridge_rules_errors_total{kind="invalid_request_error"} 1.0' in text
    assert "bridge_rules_renames_total 1.0" in text
    assert 'bridge_rules_upstream_latency_seconds_count{route="/v1/messages"} 2.0' in text
    assert "claude-sonnet" not in text  # client-controlled values never become labels


def test_health_and_readiness(proxy: str, upstream: FakeUpstream) -> None:
    assert loopback.get(proxy + "/healthz").json() == {"status": "ok"}
    ready = loopback.get(proxy + "/readyz")
    assert ready.status_code == 200
    assert ready.json()["upstream"] == "reachable"
    closed = f"http://127.0.0.1:{free_port()}"
    app = create_app(ProxyConfig(upstream=closed), engine=marking_engine())
    with running_app(with_ops(app, closed)) as url:
        down = loopback.get(url + "/readyz")
    assert down.status_code == 503
    assert down.json()["upstream"].startswith("unreachable: ")


@pytest.mark.parametrize(
    ("given", "used", "warned"),
    [
        ("https://api.anthropic.com", "https://api.anthropic.com", False),
        ("https://api.anthropic.com/", "https://api.anthropic.com", False),
        ("https://api.anthropic.com/v1", "https://api.anthropic.com", True),
        ("https://gw.example/anthropic/v1/", "https://gw.example/anthropic", True),
        ("http://127.0.0.1:9000/relay", "http://127.0.0.1:9000/relay", False),
    ],
)
def test_the_upstream_path_is_normalised(given: str, used: str, warned: bool) -> None:
    url, warning = normalise_upstream(given)
    assert url == used
    assert (warning is not None) == warned


def test_a_port_in_use_is_a_clear_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert "already in use" in (bind_problem("127.0.0.1", port) or "")
        code = main(["serve", "--upstream", "http://127.0.0.1:1", "--port", str(port)])
    assert code == 2
    assert f"port {port} on 127.0.0.1 is already in use" in capsys.readouterr().err


def test_settings_from_the_environment_and_a_config_file(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("BRIDGE_RULES_UPSTREAM", "ftp://from-env")
    assert main(["serve"]) == 2
    assert "got 'ftp://from-env'" in capsys.readouterr().err
    config = tmp_path / "serve.yaml"
    config.write_text("upstream: ftp://from-file\nmax-body-bytes: 0\n", encoding="utf-8")
    monkeypatch.delenv("BRIDGE_RULES_UPSTREAM")
    assert main(["serve", "--config", str(config)]) == 2
    assert "got 'ftp://from-file'" in capsys.readouterr().err
    monkeypatch.setenv("BRIDGE_RULES_UPSTREAM", "http://127.0.0.1:1")
    assert main(["serve", "--config", str(config)]) == 2  # the file's max-body-bytes: 0
    assert "--max-body-bytes must be at least 1" in capsys.readouterr().err
    config.write_text("upstrem: http://x\n", encoding="utf-8")
    assert main(["serve", "--config", str(config)]) == 2
    assert "unknown option 'upstrem'; did you mean 'upstream'?" in capsys.readouterr().err
