"""The access line and the metrics name what the way back renamed, JSON and SSE alike."""

from __future__ import annotations

import logging

import pytest
from fake_upstream import FakeUpstream
from servers import access_lines, running_app
from tests.proxy import loopback

from bridge_rules.proxy import ProxyConfig, create_app
from bridge_rules.proxy.obs import ACCESS_LOGGER
from bridge_rules.proxy.ops import with_ops
from bridge_rules.ruleset import load_runtime

REQUEST = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 100,
    "messages": [{"role": "user", "content": "look"}],
    "tools": [{"name": n, "input_schema": {"type": "object"}} for n in ("read", "bash", "other")],
}


def test_inbound_renames_on_the_access_line_and_in_metrics(
    upstream: FakeUpstream, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=ACCESS_LOGGER)
    upstream.script.tool_calls = [
        {"name": "Read", "input": {"file_path": "a.txt"}},
        {"name": "Bash", "input": {"command": "ls"}},
        {"name": "other", "input": {}},
    ]
    app = create_app(ProxyConfig(upstream=upstream.url), load_runtime())
    with running_app(with_ops(app, upstream.url)) as url:
        whole = loopback.post(url + "/v1/messages", json=REQUEST)
        with loopback.stream("POST", url + "/v1/messages", json={**REQUEST, "stream": True}) as r:
            streamed = r.read()
        closed = loopback.post(url + "/v1/models")  # not rewritten: no inbound_renames
        lines = access_lines(caplog, 3)
        metrics = loopback.get(url + "/metrics").text
    assert [b["name"] for b in whole.json()["content"]] == ["read", "bash", "other"]
    assert b'"name":"read"' in streamed.replace(b" ", b"")
    assert closed.status_code == 200
    json_line, sse_line, other_line = lines
    assert json_line["inbound_renames"] == {"Read": "read", "Bash": "bash"}
    assert sse_line["stream"] is True
    assert sse_line["inbound_renames"] == {"Read": "read", "Bash": "bash"}
    assert "inbound_renames" not in other_line
    assert "bridge_rules_inbound_renames_total 4.0" in metrics
