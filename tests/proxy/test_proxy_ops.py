"""``serve`` for operators, the parts test_ops.py leaves out: which paths the proxy keeps to
itself, setting precedence, the ``/v1`` warning from the command line, an unmapped-name
count, and that every metric docs/proxy.md names is exposed (issue 14, point 5)."""

from __future__ import annotations

import json
import logging
import re
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
from bridge_rules.proxy.obs import ACCESS_LOGGER
from bridge_rules.proxy.ops import with_ops
from bridge_rules.ruleset import load_runtime

DOCS = Path(__file__).resolve().parents[2] / "docs" / "proxy.md"
OPS_PATHS = ("/healthz", "/readyz", "/metrics")


@pytest.fixture
def proxy(upstream: FakeUpstream) -> Iterator[str]:
    app = create_app(ProxyConfig(upstream=upstream.url), engine=marking_engine())
    with running_app(with_ops(app, upstream.url)) as url:
        yield url


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        yield busy.getsockname()[1]


def test_get_and_head_on_the_ops_paths_never_reach_the_upstream(
    proxy: str, upstream: FakeUpstream
) -> None:
    for path in OPS_PATHS:
        assert loopback.get(proxy + path).status_code == 200
        assert loopback.head(proxy + path).status_code == 200
    assert [r.path for r in upstream.requests if r.path in OPS_PATHS] == []
    # Other methods on the same paths are the upstream's business and pass through.
    echoed = loopback.post(proxy + "/metrics", content=b"x")
    assert echoed.json()["path"] == "/metrics"


def test_a_flag_beats_the_environment_which_beats_the_file(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    config = tmp_path / "serve.yaml"
    config.write_text("upstream: ftp://from-file\n", encoding="utf-8")
    monkeypatch.setenv("BRIDGE_RULES_UPSTREAM", "ftp://from-env")
    args = ["serve", "--config", str(config)]
    assert main([*args, "--upstream", "ftp://from-flag"]) == 2
    assert "got 'ftp://from-flag'" in capsys.readouterr().err
    assert main(args) == 2
    assert "got 'ftp://from-env'" in capsys.readouterr().err
    monkeypatch.setenv("BRIDGE_RULES_CONFIG", str(config))  # the file itself from the env
    monkeypatch.delenv("BRIDGE_RULES_UPSTREAM")
    assert main(["serve"]) == 2
    assert "got 'ftp://from-file'" in capsys.readouterr().err


def test_port_from_the_environment_in_use_warns_about_v1_then_exits_2(
    busy_port: int, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BRIDGE_RULES_PORT", str(busy_port))
    code = main(["serve", "--upstream", "http://127.0.0.1:1/v1/"])
    err = capsys.readouterr().err
    assert code == 2
    assert "ends in /v1; using http://127.0.0.1:1 " in err
    assert f"port {busy_port} on 127.0.0.1 is already in use" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("- upstream\n", "serve.yaml: must be a mapping of option names to values"),
        ("# nothing set\n", "Missing option '--upstream'"),  # empty: no settings
        ("{", "serve.yaml:"),
        ("upstream: http://127.0.0.1:1\nport: [1, 2]\n", "'port' takes one value, got list"),
        ("upstream: http://127.0.0.1:1\nnosuch: 1\n", "unknown option 'nosuch'"),
        ("upstream: [unclosed\n", "error"),
    ],
)
def test_a_bad_config_file_is_one_clear_usage_error(
    text: str, expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "serve.yaml"
    config.write_text(text, encoding="utf-8")
    assert main(["serve", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert expected in err
    assert "Traceback" not in err
    assert "rule file" not in err  # not the rule files' wording
    assert "rule sections" not in err


def test_a_missing_config_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["serve", "--config", str(tmp_path / "nope.yaml")]) == 2
    assert "nope.yaml: no such file" in capsys.readouterr().err


def test_unmapped_inbound_calls_are_counted_from_each_response(
    upstream: FakeUpstream, tmp_path: Path
) -> None:
    rules = tmp_path / "warn.yaml"
    rules.write_text(
        "bridge-rules: 1\nextends: default\ninbound:\n  unmapped: warn\n", encoding="utf-8"
    )
    upstream.script.tool_calls = [
        {"name": "NoSuchTool", "input": {}},
        {"name": "Read", "input": {}},
    ]
    app = create_app(ProxyConfig(upstream=upstream.url), load_runtime([str(rules)]))
    request = {"model": "claude-sonnet-4-5", "max_tokens": 9, "messages": [],
               "tools": [{"name": "read", "input_schema": {"type": "object"}}]}  # fmt: skip
    with running_app(with_ops(app, upstream.url)) as url:
        answer = loopback.post(url + "/v1/messages", json=request)
        text = loopback.scrape(url, "bridge_rules_unmapped_inbound_total 1.0")
    assert answer.headers["x-bridge-rules-unmapped"] == "NoSuchTool"
    assert "bridge_rules_unmapped_inbound_total 1.0" in text
    assert "bridge_rules_inbound_renames_total 1.0" in text


def test_every_metric_the_docs_name_is_exposed(proxy: str) -> None:
    loopback.post(proxy + "/v1/messages", json={"model": "m", "max_tokens": 1, "messages": []})
    text = loopback.scrape(proxy, "bridge_rules_requests_total{")
    exposed = set(re.findall(r"^# TYPE (\w+) ", text, re.MULTILINE))
    documented = set(re.findall(r"`(bridge_rules_\w+?)(?:\{|`)", DOCS.read_text("utf-8")))
    assert documented
    missing = {
        name
        for name in documented
        if name not in exposed and name.removesuffix("_total") not in exposed
    }
    assert missing == set()


def test_the_access_line_holds_no_credentials_or_prompt_text(
    proxy: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=ACCESS_LOGGER)
    secret, prompt = "sk-ant-SECRET-KEY-1234", "PROMPT-TEXT-5678"
    request = {"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": prompt}]}
    reply = loopback.post(
        proxy + "/v1/messages?key=" + secret,
        json=request,
        headers={"x-api-key": secret, "authorization": "Bearer " + secret},
    )
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        lines = [r.getMessage() for r in caplog.records if r.name == ACCESS_LOGGER]
        if lines:
            break
        time.sleep(0.01)
    assert len(lines) == 1
    record = json.loads(lines[0])
    assert record["request_id"] == reply.headers["x-request-id"]
    assert {"ts", "method", "path", "status", "ms"} <= record.keys()
    assert secret not in lines[0]
    assert prompt not in lines[0]


def test_readiness_is_probed_once_per_cache_window(monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from bridge_rules.proxy import ops

    port = free_port()
    gate = ops.OpsApp(None, f"http://127.0.0.1:{port}")
    probes = 0
    real = gate._probe

    async def counted() -> str | None:
        nonlocal probes
        probes += 1
        return await real()

    monkeypatch.setattr(gate, "_probe", counted)

    async def ask(times: int) -> list[str | None]:
        return await asyncio.gather(*(gate._upstream_problem() for _ in range(times)))

    down = asyncio.run(ask(5))
    assert probes == 1  # concurrent probers share one connection attempt
    assert all(answer is not None for answer in down)
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", port))
        listening.listen()
        assert asyncio.run(ask(1)) == [down[0]]  # still the cached answer
        monkeypatch.setattr(ops, "READY_CACHE_SECONDS", 0.0)
        assert asyncio.run(ask(1)) == [None]
    assert probes == 2


def test_one_request_id_header_even_when_the_upstream_sends_its_own() -> None:
    import asyncio

    async def app(scope: dict[str, object], receive: object, send: Any) -> None:
        headers = [(b"x-request-id", b"upstream-id"), (b"request-id", b"req_1")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b""})

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": "/x", "headers": [(b"x-request-id", b"c-1")]}
    asyncio.run(with_ops(app, "http://127.0.0.1:1")(scope, None, send))
    assert sent[0]["headers"] == [(b"request-id", b"req_1"), (b"x-request-id", b"c-1")]
