"""The proxy rewrites request bodies through the runtime's message cache (issue 12).

An agent resends the whole conversation every turn. Through ``serve`` each turn
must reach the upstream byte for byte as the plain, uncached rewrite would send
it, while the messages of earlier turns are served from the cache; with
``--outbound-cache-mb 0`` nothing is stored.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from canned import Canned, Reply
from servers import access_lines, running_app
from tests.proxy import loopback

from bridge_rules.proxy import ProxyConfig, create_app
from bridge_rules.proxy.obs import ACCESS_LOGGER
from bridge_rules.proxy.ops import with_ops
from bridge_rules.ruleset import load_runtime
from bridge_rules.transform import rewrite_outbound

CAPTURE = Path(__file__).resolve().parents[1] / "golden" / "captures"


def turns(count: int) -> Iterator[dict[str, Any]]:
    """A pi conversation growing by a tool call and its result per turn, past the cache's
    size floor (``min_body``) from the first turn."""
    base = json.loads((CAPTURE / "pi-alltools-parallel-turn2.json").read_text(encoding="utf-8"))
    messages: list[dict[str, Any]] = [{"role": "user", "content": "x" * 70_000}]
    for i in range(count):
        messages = [
            *messages,
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": f"t{i}", "name": "read", "input": {"path": f"{i}"}}
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": "ok"}],
            },
        ]
        yield {**base, "stream": False, "messages": messages}


@pytest.fixture
def canned() -> Iterator[Canned]:
    with Canned() as server:
        server.reply = Reply(body=[b'{"type":"message","role":"assistant","content":[]}'])
        yield server


@pytest.mark.parametrize("cache_mb", [64, 0])
def test_each_turn_goes_upstream_as_the_plain_rewrite_would_send_it(
    canned: Canned, cache_mb: int
) -> None:
    runtime = load_runtime()
    plain = load_runtime()  # its own cache, never used: rewrite_outbound is the plain path
    app = create_app(ProxyConfig(upstream=canned.url, outbound_cache_mb=cache_mb), runtime)
    sent = list(turns(5))
    with running_app(app) as proxy:
        for payload in sent:
            r = loopback.post(proxy + "/v1/messages", content=orjson.dumps(payload), timeout=30)
            assert r.status_code == 200, r.text
    got = [seen.body for seen in canned.seen]
    assert got == [orjson.dumps(rewrite_outbound(plain, p).payload) for p in sent]
    assert b'"name":"Read"' in got[-1]
    assert b'"file_path":"4"' in got[-1]
    stored = runtime.message_cache.stats()["entries"]
    assert (stored > 0) is (cache_mb > 0)
    assert len(runtime.message_cache.tools) == (1 if cache_mb else 0)


def test_small_turns_reuse_their_tools_through_serve(canned: Canned) -> None:
    """Under the message cache's size floor (``min_body``), the tools array still comes from
    the cache, and what goes upstream is still the plain rewrite's bytes."""
    runtime, plain = load_runtime(), load_runtime()
    app = create_app(ProxyConfig(upstream=canned.url), runtime)
    base = json.loads((CAPTURE / "pi-turn2.json").read_text(encoding="utf-8"))
    sent = [{**base, "messages": base["messages"][:n]} for n in range(1, 4)]
    with running_app(app) as proxy:
        for payload in sent:
            r = loopback.post(proxy + "/v1/messages", content=orjson.dumps(payload), timeout=30)
            assert r.status_code == 200, r.text
    assert [seen.body for seen in canned.seen] == [
        orjson.dumps(rewrite_outbound(plain, p).payload) for p in sent
    ]
    assert runtime.message_cache.stats()["entries"] == 0
    assert len(runtime.message_cache.tools) == 1


def test_a_body_that_is_not_a_json_object_still_gets_its_precise_400(canned: Canned) -> None:
    app = create_app(ProxyConfig(upstream=canned.url), load_runtime())
    with running_app(app) as proxy:
        for body, says in [
            (b"", "empty"),
            (b"[1]", "not a JSON array"),
            (b'{"a":', "not valid JSON"),
            (b' {"messages": [}', "not valid JSON"),
        ]:
            r = loopback.post(proxy + "/v1/messages", content=body)
            assert r.status_code == 400, body
            assert says in r.json()["error"]["message"]
    assert canned.seen == []


def test_the_access_line_and_metrics_say_what_the_cache_served(
    canned: Canned, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=ACCESS_LOGGER)
    app = create_app(ProxyConfig(upstream=canned.url), load_runtime())
    with running_app(with_ops(app, canned.url)) as proxy:
        for payload in turns(3):
            r = loopback.post(proxy + "/v1/messages", content=orjson.dumps(payload), timeout=30)
            assert r.status_code == 200, r.text
        lines = access_lines(caplog, 3)
        metrics = loopback.get(proxy + "/metrics").text
    caches = [line["cache"] for line in lines]
    assert caches[0] == {"reused": 0, "stored": 0, "tools": False}  # a first sight stores none
    assert caches[1]["stored"] > 0
    assert caches[1]["tools"] is True
    assert caches[2]["reused"] >= caches[1]["stored"]
    assert caches[2]["tools"] is True
    reused = sum(c["reused"] for c in caches)
    stored = sum(c["stored"] for c in caches)
    assert f'bridge_rules_outbound_cache_messages_total{{result="reused"}} {reused:.1f}' in metrics
    assert f'bridge_rules_outbound_cache_messages_total{{result="stored"}} {stored:.1f}' in metrics
    assert "bridge_rules_outbound_cache_tools_total 2.0" in metrics


def test_no_cache_field_when_the_cache_is_off(
    canned: Canned, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=ACCESS_LOGGER)
    app = create_app(ProxyConfig(upstream=canned.url, outbound_cache_mb=0), load_runtime())
    with running_app(app) as proxy:
        payload = next(turns(1))
        r = loopback.post(proxy + "/v1/messages", content=orjson.dumps(payload), timeout=30)
        assert r.status_code == 200, r.text
        (line,) = access_lines(caplog, 1)
    assert "cache" not in line
    assert line["gate"] is True
