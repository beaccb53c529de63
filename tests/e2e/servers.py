"""Running the proxy app under a real uvicorn server in a thread, on a free loopback port,
and reading the access lines it wrote."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import uvicorn

from bridge_rules.proxy.config import ProxyConfig
from bridge_rules.proxy.guard import limit
from bridge_rules.proxy.obs import ACCESS_LOGGER
from bridge_rules.proxy.server import UVICORN_OPTIONS


class _Server(uvicorn.Server):
    """uvicorn's server, checking ``should_exit`` every 10 ms rather than every 100 ms, and
    stopping without uvicorn's fixed 100 ms grace pause: the suite starts and stops a server
    for most proxy tests, and each stop waited."""

    async def main_loop(self) -> None:
        ticks = 0
        # on_tick(n) refreshes the date header when n % 10 == 0: keep that once a second
        while not await self.on_tick(0 if ticks % 100 == 0 else 1):
            ticks += 1
            await asyncio.sleep(0.01)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        # uvicorn's steps: stop accepting, ask each connection to finish, wait for them and
        # their tasks (polled every 5 ms here), then the app's lifespan shutdown.
        state = self.server_state
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for connection in list(state.connections):
            connection.shutdown()
        deadline = time.monotonic() + 5
        while (state.connections or state.tasks) and time.monotonic() < deadline:
            await asyncio.sleep(0.005)
        for task in state.tasks:
            task.cancel()
        for server in self.servers:
            await server.wait_closed()
        await self.lifespan.shutdown()


@contextmanager
def running_app(
    app: Any, thread_name: str | None = None, config: ProxyConfig | None = None
) -> Iterator[str]:
    """``app`` served on a free loopback port, with the connection limits of ``config``
    (header deadline, connection budget) when given, else the defaults."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    uv_config = uvicorn.Config(app, **UVICORN_OPTIONS)
    server = _Server(limit(uv_config, config) if config is not None else uv_config)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, daemon=True, name=thread_name
    )
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the proxy did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def access_lines(caplog: pytest.LogCaptureFixture, count: int) -> list[dict[str, Any]]:
    """The access lines ``caplog`` holds, once there are ``count`` (or after 5 s): a line is
    written just after its response has gone, so the client can be ahead of it."""
    deadline = time.monotonic() + 5
    while True:
        lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == ACCESS_LOGGER]
        if len(lines) >= count or time.monotonic() > deadline:
            return lines
        time.sleep(0.01)
