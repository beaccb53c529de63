"""Spare CLI processes (``--claude-spares``) are a cache that changes no answer.

The oracle of the differential test is the fake model endpoint's own log: a conversation
driven by the ``anthropic`` SDK through two ``serve --workers 2`` behind a round-robin
balancer (a fresh connection per request, so warm hits are rarer), once with no spares and
once with spares, must reach the endpoint as the same requests, byte for byte, but for the
three values the CLI makes up per process on every run, spares or not: the scratch
directory's random name, its device id and its session id (two runs without spares differ
in these too). The access lines say which requests a spare answered: some must have.

The processes are counted in /proc (every process whose HOME is one of this serve's
scratch directories, as test_left_behind.py does): bounded, expired, and gone with the
proxy.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import anthropic
import httpx
import pytest
from scripted import ScriptedEndpoint, calls, done
from test_left_behind import gone_within, healthy, left
from tests.balancer import Balancer
from tests.ports import free_port

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("claude-code")]
SERVE = [str(Path(sys.executable).with_name("bridge-rules")), "serve", "--upstream", "claude-code"]
TOOLS = [
    {"name": "Bash", "description": "run a command", "input_schema": {"type": "object"}},
    {
        "name": "search_docs",
        "description": "search the docs",
        "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}},
    },
]
SYSTEM = "You are a careful agent. Answer briefly."
TURNS = 8
PER_RUN = [
    (rb"bridge-rules-claude-[a-z0-9_]+", b"<scratch>"),
    (rb'device_id\\":\\"[0-9a-f]{64}', b"<device>"),
    (rb'session_id\\":\\"[0-9a-f-]{36}', b"<session>"),
]
"""What the CLI makes up per process, on every run: replaced before bodies are compared."""


def per_run_out(body: bytes) -> bytes:
    for pattern, stand_in in PER_RUN:
        body = re.sub(pattern, stand_in, body)
    return body


def script() -> list[Any]:
    replies = [calls(("Bash", {"command": f"echo {n}"})) for n in range(TURNS - 1)]
    replies[2] = calls(("search_docs", {"q": "spares"}), ("Bash", {"command": "ls"}))
    return [*replies, done("All done.")]


@contextmanager
def serving(tmp: Path, endpoint: str, *flags: str) -> Iterator[tuple[str, Path, int]]:
    """``serve --upstream claude-code FLAGS`` as its own process group, its CLIs' scratch
    directories under ``tmp``; yields its URL, its stderr (the access lines) and its pid."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = tmp / f"serve-{port}.log"
    env = {
        **os.environ,
        "TMPDIR": str(tmp),
        "ANTHROPIC_BASE_URL": endpoint,
        "ANTHROPIC_API_KEY": "sk-ant-test",
    }
    with log.open("wb") as err:
        proc = subprocess.Popen(
            [*SERVE, "--port", str(port), *flags],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
        )
    try:
        healthy(url)
        yield url, log, proc.pid
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def answered_by_spares(*logs: Path, requests: int) -> int:
    """How many of the ``requests`` Messages requests so far spares answered (the access
    line is written just after the answer: waited for)."""
    return sum(1 for n in spares_used(*logs, requests=requests) if n)


def spares_used(*logs: Path, requests: int) -> list[int]:
    """For each of the ``requests`` Messages requests so far, its access line's ``spare``:
    0 for none, 1 for a bare spare, 1 + N for one with N lines of history prepared."""
    deadline = time.monotonic() + 10
    while True:
        lines = [line for log in logs for line in log.read_text().splitlines()]
        records = [json.loads(line) for line in lines if line.startswith("{")]
        answered = [r for r in records if r.get("path") == "/v1/messages"]
        if len(answered) >= requests or time.monotonic() > deadline:
            assert len(answered) == requests, answered
            return [int(r.get("spare", 0)) for r in answered]
        time.sleep(0.05)


def converse(url: str) -> list[Any]:
    """An agent's conversation through ``url``, a fresh connection per request; the
    content of each answer."""
    answers = []
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Look around."}]
    for turn in range(TURNS):
        client = anthropic.Anthropic(base_url=url, api_key="sk-client")  # its own connection
        ask: dict[str, Any] = {
            "model": "claude-sonnet-4-6",
            "max_tokens": 512,
            "system": SYSTEM,
            "tools": TOOLS,
            "messages": messages,
        }
        if turn % 2:
            with client.messages.stream(**ask) as stream:
                reply = stream.get_final_message()
        else:
            reply = client.messages.create(**ask)
        client.close()
        content = [block.model_dump(exclude_none=True) for block in reply.content]
        answers.append(content)
        messages.append({"role": "assistant", "content": content})
        results = [
            {"type": "tool_result", "tool_use_id": b["id"], "content": f"result {turn}"}
            for b in content
            if b["type"] == "tool_use"
        ]
        if not results:
            break
        messages.append({"role": "user", "content": results})
    return answers


def through_balancer(tmp: Path, *flags: str) -> tuple[list[bytes], list[Any], list[int]]:
    """The conversation through two ``serve --workers 2`` behind the balancer: what the
    endpoint received, what the client got, and the spare each request took
    (:func:`spares_used`)."""
    with ScriptedEndpoint(script()) as endpoint, ExitStack() as stack:
        flags = ("--workers", "2", *flags)
        served = [stack.enter_context(serving(tmp, endpoint.url, *flags)) for _ in range(2)]
        balancer = Balancer([int(url.rsplit(":", 1)[1]) for url, _, _ in served])
        with balancer.running() as front:
            answers = converse(front)
        sent = [per_run_out(r.body) for r in endpoint.requests]
        hits = spares_used(*(log for _, log, _ in served), requests=len(answers))
    return sent, answers, hits


def test_the_endpoint_gets_the_same_requests_with_spares_and_without(tmp_path: Path) -> None:
    cold_sent, cold_answers, cold_spares = through_balancer(tmp_path, "--claude-spares", "0")
    assert len(cold_sent) == TURNS  # the whole conversation ran
    assert cold_spares == [0] * TURNS
    for warm in (["--claude-spares", "2"], ["--claude-spares", "2", "--claude-prepare"]):
        warm_sent, warm_answers, warm_spares = through_balancer(tmp_path, *warm)
        assert warm_sent == cold_sent, warm
        assert warm_answers == cold_answers, warm
        assert warm_spares[0] == 0, warm  # the first request of a shape: a miss
        # 8 requests over 4 workers: some reach a worker that answered this shape (and,
        # prepared, an earlier turn of this conversation) before; else nothing was compared
        assert max(warm_spares) >= (3 if "--claude-prepare" in warm else 1), warm_spares
    assert gone_within(tmp_path, 5) == {}


def homes(tmp: Path) -> set[str]:
    """The scratch directories of the CLI sessions running now (one per session)."""
    found = set()
    for pid in left(tmp):
        with contextlib.suppress(OSError), open(f"/proc/{pid}/environ", "rb") as f:
            env = dict(v.split(b"=", 1) for v in f.read().split(b"\0") if b"=" in v)
            found.add(env[b"HOME"].decode())
    return found


def ask(url: str, system: str) -> httpx.Response:
    body = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 64,
        "system": system,
        "tools": TOOLS,
        "messages": [{"role": "user", "content": "hello"}],
    }
    return httpx.post(f"{url}/v1/messages", json=body, timeout=60)


def settled(tmp: Path, count: int) -> set[str]:
    """The sessions, once ``count`` of them run (a spare starts after its request)."""
    deadline = time.monotonic() + 20
    while len(found := homes(tmp)) != count and time.monotonic() < deadline:
        time.sleep(0.1)
    return found


def test_spares_are_bounded_expire_and_end_with_the_proxy(tmp_path: Path) -> None:
    with ScriptedEndpoint([done("hi")]) as endpoint:
        flags = ["--claude-spares", "1", "--claude-spare-ttl", "6"]
        with serving(tmp_path, endpoint.url, *flags) as (url, log, pid):
            assert homes(tmp_path) == set()  # none before a request showed a shape
            assert ask(url, "shape A").status_code == 200
            first = settled(tmp_path, 1)
            assert len(first) == 1  # the spare of shape A, and the request's CLI gone
            assert ask(url, "shape B").status_code == 200  # a miss: B's spare replaces A's
            second = settled(tmp_path, 1)
            assert len(second) == 1
            assert second != first
            assert answered_by_spares(log, requests=2) == 0
            assert ask(url, "shape B").status_code == 200  # a hit
            assert answered_by_spares(log, requests=3) == 1
            assert len(settled(tmp_path, 1)) == 1
            assert gone_within(tmp_path, 15) == {}  # unused for --claude-spare-ttl: ended
            assert ask(url, "shape B").status_code == 200  # expired: a miss again
            assert answered_by_spares(log, requests=4) == 1
            assert len(settled(tmp_path, 1)) == 1
            os.killpg(pid, signal.SIGTERM)  # the proxy stops: its spare with it
            assert gone_within(tmp_path, 10) == {}


def test_a_spare_dies_with_a_proxy_killed_by_sigkill(tmp_path: Path) -> None:
    with (
        ScriptedEndpoint([done("hi")]) as endpoint,
        serving(tmp_path, endpoint.url, "--workers", "2") as (url, _, pid),
    ):
        assert ask(url, "a shape").status_code == 200
        assert len(settled(tmp_path, 1)) == 1
        os.killpg(pid, signal.SIGKILL)
        assert gone_within(tmp_path, 5) == {}


def test_a_draining_proxy_ends_its_spares_before_the_requests_in_flight(tmp_path: Path) -> None:
    slow = done("An answer that takes its time.")
    slow.event_gap = 1.0
    body = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 64,
        "stream": True,
        "system": "shape B",
        "tools": TOOLS,
        "messages": [{"role": "user", "content": "hello"}],
    }
    with (
        ScriptedEndpoint([done("hi"), slow]) as endpoint,
        serving(tmp_path, endpoint.url, "--drain-timeout", "30") as (url, _, pid),
    ):
        assert ask(url, "shape A").status_code == 200
        assert len(settled(tmp_path, 1)) == 1  # shape A's spare
        with httpx.stream("POST", f"{url}/v1/messages", json=body, timeout=60) as reply:
            chunks = reply.iter_bytes()
            next(chunks)  # under way: its CLI runs, and shape B's spare starts
            assert len(settled(tmp_path, 3)) == 3
            os.killpg(pid, signal.SIGTERM)
            left_running = settled(tmp_path, 1)  # the spares end, the request goes on
            assert len(left_running) == 1
            rest = b"".join(chunks)
        assert b"message_stop" in rest  # the request in flight was answered in full
        assert gone_within(tmp_path, 10) == {}
