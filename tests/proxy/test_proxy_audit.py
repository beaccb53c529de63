"""No import statement and no file access runs per request (issue 12).

A process-wide audit hook records every ``import`` (CPython raises it only when a
module is actually looked for, which is what a failed or first import costs) and
every ``open`` and directory listing made by the proxy's server thread, while a
warmed-up proxy answers every kind of request it handles.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_upstream import FakeUpstream
from servers import running_app
from tests.proxy import loopback

from bridge_rules.proxy import ProxyConfig, create_app
from bridge_rules.ruleset import load_runtime

THREAD = "proxy-under-audit"
WATCHED = frozenset({"import", "open", "os.listdir", "os.scandir", "glob.glob", "shutil.copyfile"})
REQUEST = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 100,
    "messages": [{"role": "user", "content": "Read hello.txt"}],
    "tools": [{"name": "read", "input_schema": {"type": "object"}}],
}


class Audit:
    def __init__(self) -> None:
        self.on = False
        self.events: list[tuple[str, str]] = []

    def __call__(self, event: str, args: tuple[Any, ...]) -> None:
        if self.on and event in WATCHED and threading.current_thread().name == THREAD:
            self.events.append((event, repr(args)[:200]))


AUDIT = Audit()
sys.addaudithook(AUDIT)  # cannot be removed; it does nothing unless switched on


def every_kind_of_request(url: str) -> None:
    headers = {"x-api-key": "k", "anthropic-version": "2023-06-01"}
    loopback.post(url + "/v1/messages", json=REQUEST, headers=headers).raise_for_status()
    with loopback.stream("POST", url + "/v1/messages", json={**REQUEST, "stream": True}) as r:
        assert b"message_stop" in r.read()
    loopback.post(url + "/v1/messages", json={**REQUEST, "model": "gpt-4o"}).raise_for_status()
    loopback.post(url + "/v1/messages/count_tokens", json=REQUEST).raise_for_status()
    loopback.get(url + "/v1/models?limit=2").raise_for_status()
    loopback.get(url + "/healthz").raise_for_status()
    assert loopback.post(url + "/v1/messages", content=b"{bad").status_code == 400
    assert loopback.post(url + "/v1/messages", content=b"[" * 2000).status_code == 400
    big = json.dumps({**REQUEST, "metadata": {"user_id": "x"}})
    big = big.replace('"x"', "18446744073709551617")
    loopback.post(url + "/v1/messages", content=big.encode()).raise_for_status()
    many = {f"x-h{i}": "v" for i in range(150)}
    assert loopback.post(url + "/v1/messages", json=REQUEST, headers=many).status_code == 431


@pytest.fixture
def audited(upstream: FakeUpstream, tmp_path: Path) -> Iterator[str]:
    config = ProxyConfig(upstream=upstream.url, debug_log=str(tmp_path / "debug.jsonl"))
    with running_app(create_app(config, load_runtime()), thread_name=THREAD) as url:
        yield url


def test_requests_run_no_import_and_open_no_file(audited: str, upstream: FakeUpstream) -> None:
    every_kind_of_request(audited)  # warm up: first uses may import lazily
    upstream.script.status = None
    AUDIT.events.clear()
    AUDIT.on = True
    try:
        for _ in range(3):
            every_kind_of_request(audited)
    finally:
        AUDIT.on = False
    assert AUDIT.events == []
