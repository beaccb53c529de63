"""The HTTP upstream kind's serving side: requests forwarded to an http(s) URL through
the worker's connection pool (:mod:`.upstream`), answers back through :func:`.forward`."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any
from urllib.parse import urlsplit

from bridge_rules.proxy.config import ProxyConfig
from bridge_rules.proxy.forward import Exchange, forward
from bridge_rules.proxy.upstream import Upstream as Pool

CONNECT_TIMEOUT = 2.0
"""Seconds ``/readyz`` waits for a TCP connection to the upstream."""


class HttpUpstream:
    """An http(s) upstream (:class:`~bridge_rules.proxy.kinds.Upstream`)."""

    def __init__(self, config: ProxyConfig) -> None:
        self.url = config.upstream
        self.pool = Pool(config)

    def prepare(self) -> None:
        self.pool.session()  # the pool exists before the first request

    def send(self, ex: Exchange, rewritten: bool) -> Coroutine[Any, Any, None]:
        return forward(self.pool, ex)

    def holds_session(self, rewritten: bool) -> bool:
        return False

    async def readiness(self) -> str | None:
        return await reachable(self.url)

    async def aclose(self) -> None:
        await self.pool.aclose()


async def reachable(url: str) -> str | None:
    """Why a TCP connection to ``url``'s host fails (within :data:`CONNECT_TIMEOUT`), or None."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    problem: str | None = None
    try:
        _, writer = await asyncio.wait_for(
            asyncio.open_connection(parts.hostname, port), CONNECT_TIMEOUT
        )
        writer.close()
    except (OSError, asyncio.TimeoutError) as exc:
        problem = str(exc) or type(exc).__name__
    return problem
