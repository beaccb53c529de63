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
        """The upstream's response, its body not read yet; a fault before it is a ProxyError."""
        pairs = [(n.decode("latin-1"), v.decode("latin-1")) for n, v in headers]
        try:
            return await self.session().request(
                scope["method"],
                self.url(scope),
                headers=pairs,
                data=body or None,
                allow_redirects=False,
            )
        except asyncio.TimeoutError:
            raise ProxyError(
                504, f"the upstream did not answer within {self.config.timeout:g}s"
            ) from None
        except aiohttp.ClientError as exc:
            raise ProxyError(
                502, f"cannot reach the upstream: {type(exc).__name__}: {exc}"
            ) from None


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
