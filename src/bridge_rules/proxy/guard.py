"""uvicorn's HTTP protocol (httptools) with the connection limits a server facing the
network needs, which uvicorn leaves out:

* **A header deadline.** A client has ``header_timeout`` seconds from connecting (or from
  the first byte of a later request on the connection) to finish a request's headers;
  then it gets 408 and the connection is closed. uvicorn itself waits for ever, so a
  client sending a byte a second (slowloris) holds a connection, and a descriptor, as
  long as it likes. (The body has its own deadline, ``body_timeout``, in ``proxy.body``.)
* **A cap on the request head.** httptools keeps a header however long it grows, and the
  proxy's own ``431`` (``--max-header-bytes``) is judged once the headers are complete; a
  head still incomplete past :func:`head_cap` bytes gets ``431`` at once and the
  connection is closed, so a fast client cannot fill memory before the deadline.
* **A connection budget.** A worker holds at most ``max_connections`` client
  connections: by default as many as the open-file limit allows for two descriptors each
  (the client's, and the upstream connection its request may need), less a reserve for
  the listening socket, logs and the event loop, so the worker never runs out of
  descriptors (then it could not even accept). Past the budget, the connection that has
  waited longest for its headers, or idled longest between requests, is closed to make
  room for the new one: a client that sends its request at once is never the one closed.
  When every connection is busy with a request, the new one gets 503 with ``retry-after``
  and is closed; every accepted request keeps its latency.
* **HTTP/1.0.** A 1.0 client cannot read ``transfer-encoding: chunked`` (RFC 9112 7), so an
  answer of unknown length (a stream) is sent as it comes and ended by closing the
  connection, as 1.0 defines; and a 1.0 request's ``Expect`` is ignored (RFC 9110 10.1.1).

The limits come from the :class:`ProxyConfig` the server runs (:func:`limit`), or for a
``--workers`` process from the config in its environment.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from bridge_rules.proxy.coalesce import HeldHead
from bridge_rules.proxy.config import ENV_VAR, ProxyConfig
from bridge_rules.proxy.errors import error_body

LINGER = 0.5
"""Seconds a connection answered 408 or 503 by this module stays half-open before it is
closed: a client still sending would otherwise get a reset instead of the answer (RFC 9112
9.6); what it sends meanwhile is dropped."""
RESERVED_FDS = 64
"""Descriptors kept back from the budget: the listening socket, stdio, logs, the loop's own."""
_UNLIMITED_FDS = 1 << 16


def fd_budget() -> int:
    """Client connections the open-file limit allows, two descriptors each."""
    try:
        import resource
    except ImportError:  # not on Unix: no limit to read
        return _UNLIMITED_FDS // 2
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft > _UNLIMITED_FDS:
        soft = _UNLIMITED_FDS
    return max(1, (soft - RESERVED_FDS) // 2)


def head_cap(max_header_bytes: int) -> int:
    """Bytes of an incomplete request head (request line, names, values, separators) read
    before a 431: twice what the app accepts of names and values, plus 64 KiB for the
    request line, so anything the app would accept arrives whole."""
    return 2 * max_header_bytes + 64 * 1024


@dataclass(frozen=True)
class ConnectionLimits:
    header_timeout: float
    max_connections: int
    max_head_bytes: int

    @classmethod
    def of(cls, config: ProxyConfig) -> ConnectionLimits:
        budget = config.max_connections or fd_budget()
        return cls(config.header_timeout, budget, head_cap(config.max_header_bytes))


def limit(uv_config: Any, config: ProxyConfig) -> Any:
    """``uv_config`` (a ``uvicorn.Config``) with ``config``'s connection limits attached."""
    uv_config.connection_limits = ConnectionLimits.of(config)
    return uv_config


def _limits(uv_config: Any) -> ConnectionLimits:
    found: ConnectionLimits | None = getattr(uv_config, "connection_limits", None)
    if found is None:
        env = os.environ.get(ENV_VAR)
        found = ConnectionLimits.of(ProxyConfig.from_env() if env else ProxyConfig(upstream=""))
        uv_config.connection_limits = found
    return found


def _canned(status: int, phrase: bytes, message: str, extra: bytes = b"") -> bytes:
    body = error_body(status, message)
    return (
        b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
        b"connection: close\r\n%s\r\n%s" % (status, phrase, len(body), extra, body)
    )


class GuardedHttp(HttpToolsProtocol):
    """See the module docstring; everything else is uvicorn's own protocol."""

    def __init__(self, config: Any, server_state: Any, app_state: Any, _loop: Any = None):
        super().__init__(config, server_state, app_state, _loop)
        self.limits = _limits(config)
        self._deadline: asyncio.TimerHandle | None = None
        self._waiting_since = time.monotonic()
        self._begun = False  # a request's first byte came, its headers have not all
        self._done = False  # answered here; closing
        self._head_bytes = 0  # read while a request's head is incomplete

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self.transport = HeldHead(transport, self.loop)  # type: ignore[assignment]
        self._arm()
        if len(self.connections) > self.limits.max_connections:
            self._make_room()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._done:
            return
        heading = self._deadline is not None
        super().data_received(data)
        if heading and self._deadline is not None and not self.transport.is_closing():
            self._head_bytes += len(data)  # the head is still not complete after all of it
            if self._head_bytes > self.limits.max_head_bytes:
                message = (
                    f"the request head is over {self.limits.max_head_bytes} bytes and not "
                    "complete (bridge-rules serve --max-header-bytes)"
                )
                self._answer_and_close(_canned(431, b"Request Header Fields Too Large", message))

    def _answer_and_close(self, answer: bytes) -> None:
        """Send ``answer``, end the writing side, and close after :data:`LINGER`."""
        self._disarm()
        self._done = True
        self.transport.write(answer)
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(LINGER, self.transport.close)

    # --- the header deadline -------------------------------------------------------

    def _arm(self) -> None:
        if self._deadline is None:
            self._deadline = self.loop.call_later(self.limits.header_timeout, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            seconds = f"{self.limits.header_timeout:g}"
            message = f"the request headers did not arrive within {seconds}s"
            self._answer_and_close(_canned(408, b"Request Timeout", message))

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._begun = True
        self._arm()

    def on_headers_complete(self) -> None:
        self._disarm()
        self._begun = False
        self._head_bytes = 0
        if self.parser.get_http_version() == "1.0":
            self.expect_100_continue = False  # RFC 9110 10.1.1: ignored from a 1.0 client
        super().on_headers_complete()
        if self.scope.get("http_version") == "1.0" and self.cycle is not None:
            _close_delimited(self.cycle)

    def on_response_complete(self) -> None:
        self._waiting_since = time.monotonic()
        super().on_response_complete()

    # --- the connection budget -----------------------------------------------------

    @property
    def _idle(self) -> bool:
        """Waiting for a request's headers, or between requests: nothing of it is running."""
        return self.cycle is None or self.cycle.response_complete

    def _make_room(self) -> None:
        """Called when the worker holds more connections than its budget (some of them may
        be closing already: closed this loop iteration, not yet gone). A connection already
        answered here and lingering counts against the budget, and is the first closed."""
        live = [
            c
            for c in self.connections
            if isinstance(c, GuardedHttp) and not c.transport.is_closing()
        ]
        if len(live) <= self.limits.max_connections:
            return
        lingering = [c for c in live if c._done and c is not self]
        if lingering:
            lingering[0].transport.close()
            return
        victims = [c for c in live if c is not self and c._idle]
        if not victims:
            self._answer_and_close(
                _canned(
                    503,
                    b"Service Unavailable",
                    "this proxy worker is at its connection limit (bridge-rules serve "
                    "--max-connections) and every connection is busy; retry",
                    b"retry-after: 1\r\n",
                )
            )
            return
        oldest = min(victims, key=lambda c: c._waiting_since)
        oldest._evict()

    def _evict(self) -> None:
        self._disarm()
        if self._begun:  # a request was on its way: say why it will not be answered
            self.transport.write(
                _canned(
                    503,
                    b"Service Unavailable",
                    "this proxy worker is at its connection limit and this request's headers "
                    "were the slowest to arrive",
                )
            )
        self.transport.close()


def _close_delimited(cycle: Any) -> None:
    """Make ``cycle`` send an answer of unknown length to an HTTP/1.0 client unframed, ended
    by the close (uvicorn, with httptools, would frame it chunked, which 1.0 cannot read):
    uvicorn is told each body message is all that remains, so it writes the bytes as they
    are, and closes the connection after the last (1.0 is never kept alive)."""
    send = cycle.send
    unframed = False

    async def send_unframed(message: Any) -> None:
        nonlocal unframed
        if message["type"] == "http.response.start" and not cycle.response_started:
            names = {name.lower() for name, _ in message.get("headers", ())}
            if b"content-length" not in names and b"transfer-encoding" not in names:
                unframed = True
                cycle.chunked_encoding = False
        elif message["type"] == "http.response.body" and unframed:
            more = 1 if message.get("more_body", False) else 0
            cycle.expected_content_length = len(message.get("body", b"")) + more
        await send(message)

    cycle.send = send_unframed
