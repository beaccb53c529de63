"""Limits per client key hold for the key as a whole, under concurrent load, across workers.

Against a real ``serve --workers 3``: a key's requests at once and per minute are counted
once for the key, not once per worker (three workers that each counted alone would let
three times as many through), past a limit the answer is a 429 in Anthropic's shape with
``retry-after``, counted on ``/metrics`` by key name, and a second key keeps being served
at full speed while the first sits at its limit. The oracle is the count of requests the
fake upstream received and the statuses the clients saw; the shared counter file itself is
checked by several processes hammering it, against the invariant no interleaving may
break.
"""

from __future__ import annotations

import multiprocessing
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
from fake_upstream import FakeUpstream
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.budget import examples
from tests.proxy import loopback
from tests.proxy.clientkeys import Keys, anthropic_error, assert_no_leak
from tests.proxy.test_serve_signals import REQUEST, serving

from bridge_rules.proxy.keyfile import Limits
from bridge_rules.proxy.limits import Counters, make_file


def post(url: str, key: str) -> tuple[int, httpx.Response, float]:
    started = time.monotonic()
    reply = loopback.post(
        url + "/v1/messages", json=REQUEST, headers={"x-api-key": key}, timeout=60
    )
    return reply.status_code, reply, time.monotonic() - started


def test_requests_at_once_hold_for_the_key_across_workers_and_spare_the_others(
    upstream: FakeUpstream, tmp_path: Path
) -> None:
    keys = Keys(tmp_path / "keys.yaml")
    greedy = keys.new("greedy-team", "limits: {concurrent: 2}")
    calm = keys.new("calm-team", "limits: {concurrent: 8}")
    admin = keys.new("ops-admin", "admin: true")
    upstream.script.delay = 1.0  # every answer takes a second: the greedy ones overlap
    args = ["--upstream", upstream.url, "--keys", str(keys.path), "--workers", "3"]
    with serving(args) as server, ThreadPoolExecutor(max_workers=24) as pool:
        flood = [pool.submit(post, server.url, greedy) for _ in range(16)]
        time.sleep(0.3)  # the flood is in: two held upstream, the rest refused
        calm_runs = [pool.submit(post, server.url, calm) for _ in range(6)]
        greedy_done = [f.result() for f in flood]
        calm_done = [f.result() for f in calm_runs]
        metrics = loopback.get(server.url + "/metrics", headers={"x-api-key": admin}).text
    statuses = sorted(status for status, _, _ in greedy_done)
    assert statuses.count(200) == 2, statuses  # one count for the key, not one per worker
    assert statuses.count(429) == 14, statuses
    for status, reply, _ in greedy_done:
        if status == 429:
            anthropic_error(reply, 429, "rate_limit_error")
            assert reply.headers["retry-after"] == "1"
            assert_no_leak(reply, keys, allowed_names=("greedy-team",))
    assert [s for s, _, _ in calm_done] == [200] * 6
    # served at once, not queued behind the greedy key: each took about the upstream's second
    assert max(took for _, _, took in calm_done) < 1.0 + 2.0, calm_done
    assert 'bridge_rules_key_limited_total{key="greedy-team",limit="concurrent"} 14.0' in metrics
    assert 'key="calm-team"' not in metrics


def test_requests_per_minute_hold_for_the_key_across_workers(
    upstream: FakeUpstream, tmp_path: Path
) -> None:
    keys = Keys(tmp_path / "keys.yaml")
    metered = keys.new("metered", "limits: {per_minute: 5}")
    other = keys.new("unmetered")
    args = ["--upstream", upstream.url, "--keys", str(keys.path), "--workers", "3"]
    with serving(args) as server, ThreadPoolExecutor(max_workers=6) as pool:
        done = list(pool.map(lambda _: post(server.url, metered), range(15)))
        others = [post(server.url, other)[0] for _ in range(10)]
    statuses = [status for status, _, _ in done]
    assert statuses.count(200) == 5, statuses  # a worker each would have let 15 in
    refused = [reply for status, reply, _ in done if status == 429]
    assert len(refused) == 10
    for reply in refused:
        anthropic_error(reply, 429, "rate_limit_error")
        assert 1 <= int(reply.headers["retry-after"]) <= 60  # a token is back within 12 s
    assert others == [200] * 10
    assert len(upstream.requests) == 15


# ------------------------------------------------------------------ the counter file
def _hammer(path: str, rounds: int, seen: object) -> None:
    counters = Counters(path)
    limits = Limits(concurrent=3)
    for _ in range(rounds):
        if counters.acquire("team", limits, session=False) is None:
            flight, _ = counters.in_flight("team")
            with seen.get_lock():  # type: ignore[attr-defined]
                seen.value = max(seen.value, flight)  # type: ignore[attr-defined]
            counters.release("team", session=False)
    counters.close()


def test_the_counter_file_never_lets_more_in_than_the_limit(tmp_path: Path) -> None:
    path = make_file(str(tmp_path))
    ctx = multiprocessing.get_context("fork")
    seen = ctx.Value("i", 0)
    procs = [ctx.Process(target=_hammer, args=(path, 400, seen)) for _ in range(6)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(60)
    assert [p.exitcode for p in procs] == [0] * 6
    assert 1 <= seen.value <= 3
    assert Counters(path).in_flight("team") == (0, 0)  # every acquire released


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["a", "b"]), st.booleans(), st.booleans()), max_size=40),
    st.integers(0, 3),
    st.integers(0, 2),
)
def test_in_flight_counts_follow_a_plain_model(
    ops: list[tuple[str, bool, bool]], concurrent: int, sessions: int
) -> None:
    """Acquire (True) or release (False) of key a or b, with or without a session, against
    two dicts: what is let in is what the model lets in."""
    counters = Counters()
    limits = Limits(concurrent=concurrent, sessions=sessions)
    held: dict[str, list[bool]] = {"a": [], "b": []}
    for name, acquire, session in ops:
        if acquire:
            room = not concurrent or len(held[name]) < concurrent
            seats = not (session and sessions) or sum(held[name]) < sessions
            refused = counters.acquire(name, limits, session)
            assert (refused is None) == (room and seats)
            if refused is None:
                held[name].append(session)
        elif held[name]:
            counters.release(name, held[name].pop())
        assert counters.in_flight(name) == (len(held[name]), sum(held[name]))
    counters.close()


def test_the_cost_of_a_shared_count(tmp_path: Path, record_property: object) -> None:
    """Measured, not asserted (no timing in a unit test): what an acquire and release pair
    costs on the shared file, written to the test report."""
    counters = Counters(make_file(str(tmp_path)))
    limits = Limits(concurrent=100, per_minute=10**9)
    rounds = 20000
    started = time.perf_counter()
    for _ in range(rounds):
        assert counters.acquire("k", limits, session=False) is None
        counters.release("k", session=False)
    each = (time.perf_counter() - started) / rounds
    record_property("acquire_release_us", round(each * 1e6, 2))  # type: ignore[operator]
    print(f"acquire+release on the shared file: {each * 1e6:.2f} us")
    counters.close()
