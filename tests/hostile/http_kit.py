"""What the hostile HTTP cases share: the proxy under uvicorn on 127.0.0.1 with the default
rules, a scripted upstream, a raw socket client, and the tally every case counts in.

A case that fails by timing out counts as a hang, one that finds a value changed or
missing (a tool name not mapped back, a body cut short) as a value lost, anything else
as a traceback: the proxy answered 500, sent nothing, or raised.
"""

from __future__ import annotations

import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
from tests.hostile.tally import TALLY
from tests.proxy.canned import Canned

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "e2e"))

from servers import running_app

from bridge_rules.proxy import ProxyConfig, create_app
from bridge_rules.ruleset import load_runtime

RUNTIME = load_runtime()
READ_CALL = (
    b'{"id":"m","type":"message","role":"assistant","model":"claude-sonnet-4-5",'
    b'"content":[{"type":"tool_use","id":"t","name":"Read","input":{"file_path":"a"}}],'
    b'"stop_reason":"tool_use","stop_sequence":null}'
)
"""A JSON answer calling Claude Code's ``Read``; the client must get pi's ``read`` back."""
REQUEST = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 100,
    "messages": [{"role": "user", "content": "Read hello.txt"}],
    "tools": [{"name": "read", "input_schema": {"type": "object"}}],
}


class Lost(AssertionError):
    """A value the client sent or should have got back is missing or changed."""


@contextmanager
def counted() -> Iterator[None]:
    """One hostile case, counted in the summary line by how it ended."""
    TALLY.tried += 1
    try:
        yield
    except (httpx.TimeoutException, TimeoutError):
        TALLY.hangs += 1
        raise
    except Lost:
        TALLY.lost += 1
        raise
    except Exception:
        TALLY.tracebacks += 1
        raise


@contextmanager
def proxies() -> Iterator[Any]:
    """``make(upstream, **ProxyConfig options) -> base URL``; every proxy stopped at the end."""
    with ExitStack() as stack:

        def make(upstream: str, **options: Any) -> str:
            config = ProxyConfig(upstream=upstream, **options)
            app = create_app(config, RUNTIME)
            return stack.enter_context(running_app(app, config=config))

        yield make


@contextmanager
def upstream() -> Iterator[Canned]:
    with Canned() as server:
        yield server


def address(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").split(":")
    return host, int(port)


def exchange(url: str, request: bytes, timeout: float = 10) -> bytes:
    """Send ``request`` on a fresh socket and read until the server closes it."""
    with socket.create_connection(address(url), timeout=timeout) as sock:
        sock.sendall(request)
        return read_all(sock)


def read_all(sock: socket.socket) -> bytes:
    chunks = []
    while data := sock.recv(65536):
        chunks.append(data)
    return b"".join(chunks)


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/") else 0


@contextmanager
def raw_upstream(answer: bytes) -> Iterator[str]:
    """An upstream that reads a request and writes ``answer`` byte for byte, then closes:
    for answers an HTTP library would not write (a 103 before the 200, a bodiless 204)."""
    server = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:  # closed: the test is over
                return
            with conn:
                conn.recv(1 << 16)
                conn.sendall(answer)

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}"
    finally:
        server.close()
