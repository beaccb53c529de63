"""Access log and debug log: useful to an operator, never holding credentials or prompts."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from doubles import MarkingEngine
from fake_upstream import FakeUpstream
from servers import running_app
from tests.proxy import loopback

from bridge_rules.proxy import ProxyConfig, create_app
from bridge_rules.proxy.obs import ACCESS_LOGGER

SECRET_PROMPT = "my secret prompt text"
REQUEST = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 100,
    "system": "system prompt words",
    "messages": [{"role": "user", "content": SECRET_PROMPT}],
    "tools": [{"name": "read", "input_schema": {"type": "object"}}],
}
HEADERS = {"x-api-key": "sk-ant-api-SECRETKEY", "authorization": "Bearer SECRETTOKEN"}


def exchange(upstream: FakeUpstream, **options: Any) -> None:
    app = create_app(ProxyConfig(upstream=upstream.url, **options), rewriter=MarkingEngine())
    with running_app(app) as url:
        loopback.post(url + "/v1/messages?beta=true&api_key=SECRETQ", json=REQUEST, headers=HEADERS)
        with loopback.stream("POST", url + "/v1/messages", json={**REQUEST, "stream": True}) as r:
            r.read()
        loopback.post(url + "/v1/messages", content=b"{broken")


def test_one_access_line_per_request_without_secrets(
    upstream: FakeUpstream, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=ACCESS_LOGGER)
    exchange(upstream)
    lines = [r.getMessage() for r in caplog.records if r.name == ACCESS_LOGGER]
    assert len(lines) == 3
    first, streamed, broken = (json.loads(line) for line in lines)
    assert first["method"] == "POST"
    assert first["path"] == "/v1/messages"
    assert first["status"] == 200
    assert first["model"] == "claude-sonnet-4-5"
    assert first["stream"] is False
    assert first["gate"] is True
    assert first["renames"] == {"read": "READ"}
    assert first["ms"] > 0
    assert 0 < first["upstream_ms"] <= first["ms"]
    assert streamed["stream"] is True
    assert (broken["status"], broken["error"]) == (400, "invalid_request_error")
    assert "upstream_ms" not in broken  # refused before anything went upstream
    text = "\n".join(lines)
    for secret in ("SECRET", SECRET_PROMPT, "system prompt words"):
        assert secret not in text


def test_the_access_line_times_the_upstream_apart_from_the_proxy(
    upstream: FakeUpstream, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=ACCESS_LOGGER)
    upstream.script.delay = 0.3  # the upstream thinks for 300 ms before it answers
    app = create_app(ProxyConfig(upstream=upstream.url), rewriter=MarkingEngine())
    with running_app(app) as url:
        assert loopback.post(url + "/v1/messages", json=REQUEST).status_code == 200
    (line,) = [json.loads(r.getMessage()) for r in caplog.records if r.name == ACCESS_LOGGER]
    assert 300 <= line["upstream_ms"] <= line["ms"]


@pytest.mark.parametrize("log_prompts", [False, True])
def test_debug_log_redacts_credentials_and_omits_prompts_unless_asked(
    upstream: FakeUpstream, tmp_path: Path, log_prompts: bool
) -> None:
    path = tmp_path / "debug.jsonl"
    exchange(upstream, debug_log=str(path), log_prompts=log_prompts)
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(records) == 3
    first = records[0]
    headers = dict(first["request_headers"])
    assert headers["x-api-key"] == headers["authorization"] == "<redacted>"
    assert dict(first["query"]) == {"beta": "true", "api_key": "<redacted>"}
    assert first["upstream_body"]["x_outbound"] is True
    assert first["request_body"]["tools"][0]["name"] == "read"
    text = path.read_text()
    assert "SECRET" not in text
    assert (SECRET_PROMPT in text) is log_prompts
    assert ("message_stop" in records[1].get("response_stream", "")) is log_prompts
    if not log_prompts:
        assert first["request_body"]["messages"][0]["content"] == "<21 chars omitted>"
