"""A byte relay in front of ``serve`` that times each HTTP request as its client sees it.

pi and opencode make their requests themselves, so the time to the first byte of each
answer is taken on the wire: the relay copies bytes both ways unchanged (stdlib sockets,
no HTTP parsing on the way through) and notes, per request, when its first byte arrived
and when the first byte of the response's *body* left (the status line and headers can go
out before the answer is under way; the first body byte is the first SSE event or the
JSON message). HTTP/1.1 without pipelining, as every client here speaks it: a request
starts with the first client byte after the previous response began.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from tests.balancer import relayed


@dataclass
class Timed:
    """One request: when it began and when its answer's body began (``perf_counter``)."""

    started: float
    raw: bytearray = field(default_factory=bytearray)
    head_seen: bytearray = field(default_factory=bytearray)
    first_body: float | None = None

    @property
    def ms(self) -> float | None:
        """Time to the first body byte, in milliseconds (``None``: no body came)."""
        return None if self.first_body is None else (self.first_body - self.started) * 1000

    @property
    def json(self) -> Any:
        """The request's JSON body (``None`` when it has none)."""
        _, _, body = bytes(self.raw).partition(b"\r\n\r\n")
        return json.loads(body) if body.strip() else None


class TimingRelay:
    """Listens on a free loopback port and relays every connection to ``target``."""

    def __init__(self, target: str) -> None:
        parts = urlsplit(target)
        self.target = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.requests: list[Timed] = []
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}"

    def __enter__(self) -> TimingRelay:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.listener.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return  # closed
            server = socket.create_connection(self.target)
            for s in (client, server):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            current: list[Timed] = []  # this connection's request in flight, if any
            threading.Thread(target=self._up, args=(client, server, current), daemon=True).start()
            threading.Thread(target=self._down, args=(server, client, current), daemon=True).start()

    def _up(self, src: socket.socket, dst: socket.socket, current: list[Timed]) -> None:
        for data in relayed(src, dst):
            now = time.perf_counter()
            with self.lock:
                if not current or current[-1].head_seen:  # a new request on this connection
                    current.append(Timed(now))
                    self.requests.append(current[-1])
                current[-1].raw += data

    def _down(self, src: socket.socket, dst: socket.socket, current: list[Timed]) -> None:
        for data in relayed(src, dst):
            now = time.perf_counter()
            with self.lock:
                if not current or current[-1].first_body is not None:
                    continue
                timed = current[-1]
                timed.head_seen += data
                if bytes(timed.head_seen).partition(b"\r\n\r\n")[2]:
                    timed.first_body = now
