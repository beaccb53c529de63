"""The heap is given back after large requests, once, when they stop (proxy/heap.py)."""

from __future__ import annotations

import asyncio
import platform
import threading
import time

import pytest
from doubles import marking_engine
from fake_upstream import FakeUpstream
from servers import running_app
from tests.proxy import loopback

from bridge_rules.proxy import ProxyConfig, create_app
from bridge_rules.proxy.heap import LARGE_BYTES, HeapTrimmer, glibc_trim, trim_enabled


class Counting:
    def __init__(self) -> None:
        self.calls = 0
        self.done = threading.Event()

    def __call__(self) -> None:
        self.calls += 1
        self.done.set()


async def _finish_then_wait(trimmer: HeapTrimmer, sizes: list[tuple[int, int]]) -> None:
    for bytes_in, bytes_out in sizes:
        trimmer.finished(bytes_in, bytes_out)
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.25)


def test_a_burst_of_large_requests_is_followed_by_one_trim() -> None:
    trim = Counting()
    trimmer = HeapTrimmer(trim, quiet=0.05)
    burst = [(LARGE_BYTES, 100), (100, LARGE_BYTES), (5 * LARGE_BYTES, 0)]
    asyncio.run(_finish_then_wait(trimmer, burst))
    assert trim.done.wait(5)
    time.sleep(0.05)
    assert (trim.calls, trimmer.trims) == (1, 1)
    trimmer.close()


def test_small_requests_never_trim_and_a_closed_trimmer_does_not_fire() -> None:
    trim = Counting()
    trimmer = HeapTrimmer(trim, quiet=0.05)
    asyncio.run(_finish_then_wait(trimmer, [(LARGE_BYTES - 1, LARGE_BYTES - 1)] * 5))
    assert trim.calls == 0

    async def large_then_close() -> None:
        trimmer.finished(LARGE_BYTES, 0)
        trimmer.close()
        await asyncio.sleep(0.2)

    asyncio.run(large_then_close())
    assert trim.calls == 0


def test_the_switch_and_the_c_library() -> None:
    assert trim_enabled({})
    assert trim_enabled({"BRIDGE_RULES_MALLOC_TRIM": "1"})
    for off in ("0", "off", "false", "No"):
        assert not trim_enabled({"BRIDGE_RULES_MALLOC_TRIM": off})
    assert HeapTrimmer.from_env({"BRIDGE_RULES_MALLOC_TRIM": "0"}).trim is None
    trim = glibc_trim()
    if platform.libc_ver()[0] == "glibc":
        assert trim is not None
        assert trim() in (0, 1)  # 1: memory was released, 0: there was none to release


@pytest.mark.parametrize("size", [1000, LARGE_BYTES + 1000])
def test_the_proxy_trims_after_a_large_request_only(upstream: FakeUpstream, size: int) -> None:
    trim = Counting()
    app = create_app(ProxyConfig(upstream=upstream.url), engine=marking_engine())
    app.heap = HeapTrimmer(trim, quiet=0.05)
    request = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 100,
        "messages": [{"role": "user", "content": "x" * size}],
    }
    with running_app(app) as url:
        assert loopback.post(url + "/v1/messages", json=request).status_code == 200
        trimmed = trim.done.wait(1.0)
    assert trimmed == (size > LARGE_BYTES)
