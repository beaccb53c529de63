"""The upstream client: one pooled aiohttp session per worker, shared by every request.

aiohttp was chosen by measurement (benchmarks/README.md): on the same uvicorn
stack a forwarder built on it costs a fraction of the CPU per request of one on
httpx/httpcore, and it keeps its throughput at 200 concurrent clients. The
session keeps no per-client state: cookies go to a :class:`aiohttp.DummyCookieJar`
(a ``set-cookie`` for one client must never ride along on another's request),
redirects are not followed, and no default header is added that the client did
not send. An idle connection is kept for reuse ``upstream_keepalive`` seconds (30 by
default; 0: a new connection per request). Kept below the upstream's own idle timeout,
the proxy never picks a connection the upstream is closing at that instant; otherwise a
request can, rarely, and fails with a 502 (a POST is not retried: the upstream may have
run it).
Everything the session needs is imported at start-up, so a request runs no import
statement and touches no file.

Nothing in the upstream URL becomes a header: credentials written into it
(``http://user:pass@host``, deprecated by RFC 9110 4.2.4) are refused by ``serve`` and
dropped here, so aiohttp never adds an ``Authorization`` the client did not send (nor
refuses the request when the client sent its own). Bodies are never decoded by aiohttp
(``proxy.coding`` does that, for the answers the proxy rewrites).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from typing import Any

import aiohttp
from yarl import URL

from bridge_rules.proxy.config import ProxyConfig
from bridge_rules.proxy.errors import ProxyError
from bridge_rules.proxy.headers import Raw
from bridge_rules.proxy.reply import Message

# What a failed read of an upstream body raises (a timeout is both, in aiohttp).
READ_ERRORS = (aiohttp.ClientError, asyncio.TimeoutError)
# aiohttp would otherwise add these when the client did not send them.
_SKIP = frozenset({"User-Agent", "Accept", "Accept-Encoding", "Content-Type"})
_MAX_FIELD = 64 * 1024  # a response header line from the upstream


class Upstream:
    """The upstream's address and settings, and the connection pool to it."""

    def __init__(self, config: ProxyConfig) -> None:
        self.config = config
        self.base = without_userinfo(config.base)
        self._session: aiohttp.ClientSession | None = None

    def session(self) -> aiohttp.ClientSession:
        """The pool, made on first use inside the worker's event loop."""
        if self._session is None:
            timeout = aiohttp.ClientTimeout(
                total=None, connect=self.config.connect_timeout, sock_read=self.config.timeout
            )
            keepalive = self.config.upstream_keepalive
            connector = (
                aiohttp.TCPConnector(limit=0, ttl_dns_cache=60, keepalive_timeout=keepalive)
                if keepalive > 0
                else aiohttp.TCPConnector(limit=0, ttl_dns_cache=60, force_close=True)
            )
            self._session = aiohttp.ClientSession(
                connector=connector,
                timeout=timeout,
                cookie_jar=aiohttp.DummyCookieJar(),
                auto_decompress=False,
                skip_auto_headers=_SKIP,
                max_field_size=_MAX_FIELD,
            )
        return self._session

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def url(self, scope: Message) -> URL:
        """The upstream URL for the request, with the path's percent-encoding kept as sent."""
        path: bytes = scope.get("raw_path") or scope["path"].encode()
        url = self.base + path.decode("latin-1")
        if scope.get("query_string"):
            url += "?" + scope["query_string"].decode("latin-1")
        return URL(url, encoded=True)

    async def send(self, scope: Message, headers: Raw, body: bytes) -> aiohttp.ClientResponse:
        """The upstream's response, its body not read yet; a fault before it is a ProxyError.

        ``--timeout`` bounds silence both ways: aiohttp's read timeout covers the wait for
        the answer, and a body larger than the socket buffers is handed over in pieces,
        each of which must be taken within the timeout (aiohttp has no write timeout, so
        an upstream that never reads the body would otherwise hold the request for ever).
        """
        pairs = [(n.decode("latin-1"), v.decode("latin-1")) for n, v in headers]
        timeout = self.config.timeout
        deadline: Any = None
        try:
            if len(body) <= _PACED or _timeout is None:  # one write: aiohttp's own timeouts
                return await self._request(scope, pairs, body or None)
            async with _timeout(None) as deadline:
                pairs.append(("Content-Length", str(len(body))))  # else sent chunked
                return await self._request(scope, pairs, _paced(body, deadline, timeout))
        except asyncio.TimeoutError:
            late = deadline is not None and deadline.when() is not None
            what = "did not take the request body" if late else "did not answer"
            raise ProxyError(504, f"the upstream {what} within {timeout:g}s") from None
        except aiohttp.ClientError as exc:
            raise ProxyError(
                502, f"cannot reach the upstream: {type(exc).__name__}: {exc}"
            ) from None

    def _request(
        self, scope: Message, pairs: list[tuple[str, str]], data: Any
    ) -> Awaitable[aiohttp.ClientResponse]:
        """The request, to be awaited (no coroutine of its own in between)."""
        return self.session().request(
            scope["method"], self.url(scope), headers=pairs, data=data, allow_redirects=False
        )


_PACED = 64 * 1024
"""Bodies larger than this are handed to aiohttp piece by piece, each under the timeout
(Python 3.11+; a smaller one is one write, and entering a timeout scope for it cost ~3% of
a busy worker's CPU)."""
_timeout: Any = getattr(asyncio, "timeout", None)


async def _paced(body: bytes, deadline: Any, timeout: float) -> AsyncIterator[memoryview]:
    """``body`` in pieces; each must be taken (aiohttp drains the socket between them)
    within ``timeout`` of the last. Once all is taken, the deadline is lifted: the wait
    for the answer is bounded by the read timeout instead."""
    loop = asyncio.get_running_loop()
    view = memoryview(body)
    for start in range(0, len(body), _PACED):
        deadline.reschedule(loop.time() + timeout)
        yield view[start : start + _PACED]
    deadline.reschedule(None)


def without_userinfo(url: str) -> str:
    """``url`` without ``user:password@`` (the rest, percent-encoding included, as written)."""
    scheme, sep, rest = url.partition("://")
    authority, slash, path = rest.partition("/")
    if "@" not in authority:
        return url
    return scheme + sep + authority.rpartition("@")[2] + slash + path


def read_fault(exc: BaseException, timeout: float) -> str:
    """What to tell the client when an upstream body read failed."""
    if isinstance(exc, asyncio.TimeoutError):
        return f"the upstream sent nothing for {timeout:g}s and the stream was abandoned"
    return f"the upstream closed the stream mid-response ({type(exc).__name__})"
