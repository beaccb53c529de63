"""Which headers cross the proxy, and how secrets are kept out of logs.

Hop-by-hop headers (RFC 9110 7.6.1) describe one connection, not the message, so
they are dropped in both directions, together with any header the ``Connection``
header names. ``content-length`` is dropped because the proxy recomputes it for
bodies it rewrites; ``host`` because it names the proxy, not the upstream; ``expect``
because the proxy has met the expectation itself (RFC 9110 10.1.1): it reads the whole
body before it forwards, so an upstream that never sends ``100 Continue`` must not hold
the request (aiohttp waits for one, unbounded, when the header is forwarded).

The debug log keeps a header's or query parameter's value only when :data:`LOGGED_HEADERS`
or :data:`LOGGED_QUERY` names it: a credential has no fixed name (session ids, CSRF
tokens, ``?sig=``), so anything not known to be harmless is redacted.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import parse_qsl

HOP_BY_HOP = frozenset(
    {
        b"connection",
        b"keep-alive",
        b"proxy-authenticate",
        b"proxy-authorization",
        b"proxy-connection",
        b"te",
        b"trailer",
        b"transfer-encoding",
        b"upgrade",
    }
)

Raw = list[tuple[bytes, bytes]]

REDACTED = "<redacted>"
LOGGED_HEADERS = frozenset(
    {
        "accept",
        "accept-encoding",
        "anthropic-beta",
        "anthropic-version",
        "cache-control",
        "content-encoding",
        "content-length",
        "content-type",
        "date",
        "expect",
        "host",
        "request-id",
        "retry-after",
        "transfer-encoding",
        "user-agent",
        "via",
        "x-request-id",
    }
)
"""Headers whose values describe the message, never who sent it; every other is redacted."""
LOGGED_QUERY = frozenset({"beta"})
"""Query parameters the Messages API defines (``?beta=true``); every other is redacted."""


def filter_headers(headers: Iterable[tuple[bytes, bytes]], drop: frozenset[bytes]) -> Raw:
    """Headers minus hop-by-hop ones and ``drop``; repeated headers keep their order.
    Names come out lower-cased. One pass, against a set made once per ``drop``: this runs
    twice on every request."""
    skip = _SKIP.get(drop)
    if skip is None:
        skip = HOP_BY_HOP | drop
        if len(_SKIP) < 16:
            _SKIP[drop] = skip
    out: Raw = []
    named: list[bytes] = []
    for raw, value in headers:
        name = raw.lower()
        if name not in skip:
            out.append((name, value))
        elif name == b"connection":
            named.append(value)
    if named:  # rare: headers the Connection header names are hop-by-hop too
        also = {p.strip().lower() for v in named for p in v.split(b",") if p.strip()}
        out = [(n, v) for n, v in out if n not in also]
    return out


_SKIP: dict[frozenset[bytes], frozenset[bytes]] = {}
"""Hop-by-hop headers and a ``drop`` set, by that set (a handful of constant sets)."""
REQUEST_DROP = frozenset({b"host", b"content-length", b"expect", b"x-bridge-rules-policy"})
_REQUEST_DROP_IDENTITY = REQUEST_DROP | {b"accept-encoding"}


def request_headers(client: Iterable[tuple[bytes, bytes]], identity: bool) -> Raw:
    """Client headers to send upstream; ``identity`` asks for an uncompressed body
    because the proxy is going to rewrite it."""
    if not identity:
        return filter_headers(client, REQUEST_DROP)
    out = filter_headers(client, _REQUEST_DROP_IDENTITY)
    out.append((b"accept-encoding", b"identity"))
    return out


def redact(headers: Iterable[tuple[bytes, bytes]]) -> list[list[str]]:
    """Headers as printable pairs, each value not in :data:`LOGGED_HEADERS` redacted."""
    out = []
    for raw_name, raw_value in headers:
        name = raw_name.decode("latin-1")
        shown = name.lower() in LOGGED_HEADERS
        out.append([name, raw_value.decode("latin-1") if shown else REDACTED])
    return out


def redact_query(query: bytes) -> list[list[str]]:
    """Query parameters as pairs, each value not in :data:`LOGGED_QUERY` redacted."""
    pairs = parse_qsl(query.decode("latin-1"), keep_blank_values=True)
    return [[k, v if k.lower() in LOGGED_QUERY else REDACTED] for k, v in pairs]


def expectation(headers: Iterable[tuple[bytes, bytes]]) -> bytes | None:
    """An ``Expect`` the proxy cannot meet (anything but ``100-continue``, RFC 9110 10.1.1:
    417), or None."""
    for name, value in headers:
        if name == b"expect":
            for part in value.split(b","):
                if part.strip().lower() != b"100-continue":
                    return part.strip()
    return None
