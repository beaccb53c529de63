"""Which headers cross the proxy, and how secrets are kept out of logs.

Hop-by-hop headers (RFC 9110 7.6.1) describe one connection, not the message, so
they are dropped in both directions, together with any header the ``Connection``
header names. ``content-length`` is dropped because the proxy recomputes it for
bodies it rewrites; ``host`` because it names the proxy, not the upstream.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

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

_SECRET = re.compile(r"(?i)(key|token|secret|auth|cookie|password|credential|signature)")
REDACTED = "<redacted>"


def filter_headers(headers: Iterable[tuple[bytes, bytes]], drop: frozenset[bytes]) -> Raw:
    """Headers minus hop-by-hop ones and ``drop``; repeated headers keep their order.
    Names come out lower-cased."""
    lowered = [(name.lower(), value) for name, value in headers]
    named = [value for name, value in lowered if name == b"connection"]
    if named:  # rare: headers the Connection header names are hop-by-hop too
        drop = drop | {p.strip().lower() for v in named for p in v.split(b",") if p.strip()}
    return [(n, v) for n, v in lowered if n not in HOP_BY_HOP and n not in drop]


REQUEST_DROP = frozenset({b"host", b"content-length"})


def request_headers(client: Iterable[tuple[bytes, bytes]], identity: bool) -> Raw:
    """Client headers to send upstream; ``identity`` asks for an uncompressed body
    because the proxy is going to rewrite it."""
    if not identity:
        return filter_headers(client, REQUEST_DROP)
    out = filter_headers(client, REQUEST_DROP | {b"accept-encoding"})
    out.append((b"accept-encoding", b"identity"))
    return out


def is_secret(name: str) -> bool:
    return bool(_SECRET.search(name))


def redact(headers: Iterable[tuple[bytes, bytes]]) -> list[list[str]]:
    """Headers as printable pairs with every credential-looking value replaced."""
    return [
        [n.decode("latin-1"), REDACTED if is_secret(n.decode("latin-1")) else v.decode("latin-1")]
        for n, v in headers
    ]
