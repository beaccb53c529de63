"""Slow and greedy clients cannot starve the others (issue 26): a header deadline, a
connection budget per worker that closes the slowest connection for a new one, and a 503
when every connection is busy. The slowloris case runs ``bridge-rules serve`` under a
1,024-descriptor limit, against 1,100 connections sending a header byte a second."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
from tests.hostile.http_kit import (
    READ_CALL,
    REQUEST,
    address,
    counted,
    exchange,
    proxies,
    read_all,
    status_of,
    upstream,
)
from tests.ports import free_port
from tests.proxy import loopback
from tests.proxy.canned import Reply

ROOT = Path(__file__).resolve().parents[2]
PARTIAL = b"POST /v1/messages HTTP/1.1\r\nhost: 127.0.0.1\r\nx-slow: "


def test_headers_that_do_not_arrive_in_time_get_408_and_the_connection_closes() -> None:
    with counted(), upstream() as up, proxies() as make:
        proxy = make(up.url, header_timeout=0.3)
        started = time.monotonic()
        with socket.create_connection(address(proxy), timeout=5) as sock:
            try:
                for byte in PARTIAL:  # a byte every 50 ms: never all the headers in time
                    sock.sendall(bytes([byte]))
                    time.sleep(0.05)
            except OSError:  # closed for writing once the deadline passed
                pass
            answer = read_all(sock)
        assert status_of(answer) == 408
        assert time.monotonic() - started < 2
        assert up.seen == []


def test_a_connection_that_sends_nothing_is_closed_at_the_header_deadline() -> None:
    with counted(), upstream() as up, proxies() as make:
        proxy = make(up.url, header_timeout=0.3)
        with socket.create_connection(address(proxy), timeout=5) as sock:
            assert status_of(read_all(sock)) == 408


def test_a_request_head_that_never_ends_gets_431_before_it_fills_memory() -> None:
    with counted(), upstream() as up, proxies() as make:
        proxy = make(up.url, max_header_bytes=4096)  # a head of 72 KiB is the most kept
        with socket.create_connection(address(proxy), timeout=5) as sock:
            sock.sendall(PARTIAL)
            try:  # 64 MiB of one header value, as fast as it goes: dropped after the 431
                for _ in range(1024):
                    sock.sendall(b"x" * 65536)
            except OSError:  # closed once the answer had lingered
                pass
            answer = read_all(sock)
        assert status_of(answer) == 431
        assert b"--max-header-bytes" in answer
        assert up.seen == []


def test_a_body_that_does_not_arrive_in_time_gets_408() -> None:
    with counted(), upstream() as up, proxies() as make:
        proxy = make(up.url, body_timeout=0.3)
        with socket.create_connection(address(proxy), timeout=5) as sock:
            sock.sendall(
                b"POST /v1/messages HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 100\r\n\r\n{"
            )
            assert status_of(read_all(sock)) == 408
        assert up.seen == []


def test_past_the_budget_the_slowest_connection_makes_room_for_a_new_one() -> None:
    with counted(), upstream() as up, proxies() as make:
        up.reply = Reply(body=[READ_CALL])
        proxy = make(up.url, max_connections=4)
        slow = [socket.create_connection(address(proxy), timeout=5) for _ in range(4)]
        try:
            for sock in slow:
                sock.sendall(PARTIAL)
                time.sleep(0.02)  # the first is the oldest
            r = loopback.post(proxy + "/v1/messages", json=REQUEST, timeout=5)
            assert r.status_code == 200
            assert status_of(read_all(slow[0])) == 503  # closed for the new one, told why
        finally:
            for sock in slow:
                sock.close()


def test_when_every_connection_is_busy_a_new_one_gets_503_and_the_busy_ones_finish() -> None:
    def slow_body() -> Iterator[bytes]:
        time.sleep(0.6)
        yield READ_CALL

    with counted(), upstream() as up, proxies() as make:
        up.reply = Reply(body=slow_body)
        proxy = make(up.url, max_connections=2)
        results: list[int] = []

        def busy() -> None:
            r = loopback.post(proxy + "/v1/messages", json=REQUEST, timeout=5)
            results.append(r.status_code)

        workers = [threading.Thread(target=busy) for _ in range(2)]
        for w in workers:
            w.start()
        deadline = time.monotonic() + 5
        while len(up.seen) < 2:  # both requests are with the upstream now
            assert time.monotonic() < deadline, "the busy requests never reached the upstream"
            time.sleep(0.01)
        answer = exchange(proxy, b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n", timeout=5)
        assert status_of(answer) == 503
        assert b"retry-after: 1" in answer
        for w in workers:
            w.join(5)
        assert results == [200, 200]


# ---------------------------------------------------------------- slowloris
ATTACKERS = 1100
NORMAL = 20
FD_LIMIT = 1024
SERVE = (  # the limit is set in the server process itself, before it opens anything
    "import resource; "
    f"resource.setrlimit(resource.RLIMIT_NOFILE, ({FD_LIMIT}, {FD_LIMIT})); "
    "from bridge_rules.cli.app import entry; entry()"
)


class _Slowloris(threading.Thread):
    """``ATTACKERS`` connections sending one header byte a second each; a connection the
    server closes is opened again at once."""

    def __init__(self, port: int) -> None:
        super().__init__(daemon=True)
        self.port = port
        self.stop = threading.Event()
        self.socks: list[socket.socket] = []
        self.reopened = 0

    def _open(self) -> socket.socket:
        sock = socket.socket()
        sock.setblocking(False)
        sock.connect_ex(("127.0.0.1", self.port))
        return sock

    def run(self) -> None:
        self.socks = [self._open() for _ in range(ATTACKERS)]
        sent = 0
        while not self.stop.wait(1.0):
            byte = PARTIAL[sent % len(PARTIAL) : sent % len(PARTIAL) + 1]
            sent += 1
            for i, sock in enumerate(self.socks):
                try:
                    sock.send(byte)
                except OSError:  # closed by the server (or not connected yet): again
                    sock.close()
                    self.socks[i] = self._open()
                    self.reopened += 1
        for sock in self.socks:
            sock.close()


def test_slowloris_cannot_starve_normal_clients_under_a_1024_descriptor_limit() -> None:
    with counted(), upstream() as up:
        up.reply = Reply(body=[READ_CALL])
        port = free_port()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        server = subprocess.Popen(
            [sys.executable, "-c", SERVE, "serve", "--upstream", up.url,
             "--port", str(port), "--header-timeout", "10"],
            env=env, cwd=ROOT,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        attack = _Slowloris(port)
        try:
            base = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 20
            while True:
                try:
                    if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                assert time.monotonic() < deadline, "the server did not start"
                assert server.poll() is None, "the server exited"
                time.sleep(0.1)
            limits = Path(f"/proc/{server.pid}/limits")
            if limits.exists():  # Linux: the server really runs under the limit
                line = next(x for x in limits.read_text().splitlines() if "open files" in x)
                assert line.split()[3:5] == [str(FD_LIMIT), str(FD_LIMIT)]
            attack.start()
            time.sleep(2.5)  # every attacker connected and trickling; the budget (480) full
            latencies = []
            for _ in range(NORMAL):
                started = time.monotonic()
                r = httpx.post(base + "/v1/messages", json=REQUEST, timeout=5)
                latencies.append(time.monotonic() - started)
                assert r.status_code == 200, r.text
                assert json.loads(r.content)["content"][0]["name"] == "read"
                time.sleep(0.15)
            latencies.sort()
            p99 = latencies[int(0.99 * (len(latencies) - 1))]
            assert p99 < 1.0, latencies
            assert attack.reopened > 0  # the attack was on: connections were closed under it
        finally:
            attack.stop.set()
            attack.join(10)
            server.terminate()
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
