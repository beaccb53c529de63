"""Access log and debug log: useful to an operator, never holding credentials or prompts."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import sys
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from doubles import marking_engine
from fake_upstream import FakeUpstream
from hypothesis import given, settings
from hypothesis import strategies as st
from servers import running_app
from tests.budget import examples
from tests.proxy import loopback

from bridge_rules.proxy import ProxyConfig, create_app, obs
from bridge_rules.proxy.obs import ACCESS_LOGGER, AccessRecord, configure_logging

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
    app = create_app(ProxyConfig(upstream=upstream.url, **options), engine=marking_engine())
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
    app = create_app(ProxyConfig(upstream=upstream.url), engine=marking_engine())
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
    assert first["upstream_body"]["tools"][0]["name"] == "READ"
    assert first["request_body"]["tools"][0]["name"] == "read"
    text = path.read_text()
    assert "SECRET" not in text
    assert (SECRET_PROMPT in text) is log_prompts
    assert ("message_stop" in records[1].get("response_stream", "")) is log_prompts
    if not log_prompts:
        assert first["request_body"]["messages"][0]["content"] == "<21 chars omitted>"


@pytest.fixture
def configured(monkeypatch: pytest.MonkeyPatch) -> Iterator[io.StringIO]:
    """``configure_logging`` as ``serve`` calls it, writing to a buffer; undone afterwards."""
    names = (ACCESS_LOGGER, "bridge_rules.proxy", "uvicorn.error")
    saved = [
        (lg, lg.handlers[:], lg.filters[:], lg.propagate, lg.level)
        for lg in map(logging.getLogger, names)
    ]
    buffer = io.StringIO()
    monkeypatch.setattr(sys, "stderr", buffer)
    monkeypatch.setattr(obs._Sink, "handler", None)
    configure_logging()
    yield buffer
    for lg, handlers, filters, propagate, level in saved:
        lg.handlers[:], lg.filters[:], lg.propagate = handlers, filters, propagate
        lg.setLevel(level)


def _record() -> AccessRecord:
    record = AccessRecord("POST", "/v1/messages", status=200, model="claude-sonnet-4-5")
    record.gate, record.renames = True, {"read": "Read"}
    return record


def test_served_access_lines_are_what_the_logging_handler_writes(
    configured: io.StringIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    logger = logging.getLogger(ACCESS_LOGGER)
    monkeypatch.setattr(logger, "handlers", [obs._Sink.handler])  # not pytest's capture too
    records = []
    make = logger.makeRecord
    monkeypatch.setattr(logger, "makeRecord", lambda *a, **k: records.append(a) or make(*a, **k))
    _record().emit()  # straight to the handler's stream: no LogRecord made
    assert records == []
    seen: list[str] = []
    logger.addFilter(lambda r: seen.append(r.getMessage()) or True)
    _record().emit()  # a filter on the logger: through logging, as anyone configuring it expects
    lines = configured.getvalue().splitlines()
    assert len(records) == 1
    assert len(lines) == 2
    assert seen == [lines[1]]
    direct, logged = (json.loads(line) for line in lines)
    assert direct.keys() == logged.keys()
    assert {k: v for k, v in direct.items() if k not in ("ts", "ms")} == {
        k: v for k, v in logged.items() if k not in ("ts", "ms")
    }
    logger.setLevel(logging.WARNING)  # the access log switched off: nothing at all
    _record().emit()
    assert len(configured.getvalue().splitlines()) == 2


@settings(max_examples=examples(400))
@given(st.floats(min_value=0, max_value=4_102_444_800, allow_nan=False))
def test_access_timestamps_read_as_datetime_writes_them(ts: float) -> None:
    made = datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec="milliseconds")
    assert obs._Clock.iso(ts) == made


def test_a_broken_log_stream_never_fails_the_request(
    configured: io.StringIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    handler = obs._Sink.handler
    assert handler is not None
    monkeypatch.setattr(logging.getLogger(ACCESS_LOGGER), "handlers", [handler])
    monkeypatch.setattr(logging, "raiseExceptions", False)  # as in production: no report
    handler.setStream(io.StringIO())
    handler.stream.close()  # writing raises ValueError, as a closed stderr does
    _record().emit()  # must not raise


def _alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """The handler ``configure_logging`` made, the access logger's only one (as served:
    not pytest's capture too, which it adds once the test has begun)."""
    handler = obs._Sink.handler
    assert handler is not None
    monkeypatch.setattr(logging.getLogger(ACCESS_LOGGER), "handlers", [handler])


def test_one_loop_turns_access_lines_are_written_together_in_order(
    configured: io.StringIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    served = configured
    _alone(monkeypatch)
    writes: list[str] = []
    write = served.write
    monkeypatch.setattr(served, "write", lambda text: writes.append(text) or write(text))

    async def turn() -> tuple[str, str]:
        for path in ("/a", "/b", "/c"):
            AccessRecord("POST", path, status=200).emit()
        waiting = served.getvalue()
        await asyncio.sleep(0)  # the end of this loop turn
        after_one_turn = served.getvalue()
        AccessRecord("POST", "/d", status=200).emit()
        logging.getLogger("bridge_rules.proxy").warning("a line of another kind")
        return waiting, after_one_turn

    waiting, after_one_turn = asyncio.run(turn())
    assert waiting == ""
    assert [json.loads(line)["path"] for line in after_one_turn.splitlines()] == ["/a", "/b", "/c"]
    assert writes[0] == after_one_turn  # the turn's lines: one write
    lines = served.getvalue().splitlines()
    assert json.loads(lines[3])["path"] == "/d"  # written before the warning that followed it
    assert lines[4] == "a line of another kind"


def test_access_lines_still_waiting_are_written_when_the_server_stops(
    configured: io.StringIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    served = configured
    _alone(monkeypatch)

    async def last_request() -> str:
        AccessRecord("POST", "/v1/messages", status=200).emit()
        waiting = served.getvalue()
        obs.flush_access_log()  # what the app's shutdown (and process exit) call
        return waiting

    assert asyncio.run(last_request()) == ""
    assert json.loads(served.getvalue())["path"] == "/v1/messages"


def test_a_full_buffer_is_written_without_waiting_for_the_turn(
    configured: io.StringIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    served = configured
    _alone(monkeypatch)

    async def burst() -> int:
        for _ in range(obs.MAX_PENDING):
            AccessRecord("GET", "/x", status=200).emit()
        return len(served.getvalue().splitlines())

    assert asyncio.run(burst()) == obs.MAX_PENDING
