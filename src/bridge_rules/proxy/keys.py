"""Who is calling: the client key a request carries, checked against ``serve --keys``.

A request carries its key as ``x-api-key`` or ``Authorization: Bearer`` (the scheme in any
case, RFC 9110 11.1; any run of spaces or tabs after it). Every copy of either header is
read: a request whose copies name different keys is refused, never resolved by picking
one, since a proxy in front of this one may read a different copy than we do. The key is
hashed and its hash compared with every stored hash by :func:`hmac.compare_digest`, the
loop never stopping early, so the time taken does not say which key nearly matched.

A refusal says what was wrong in general words only: never the key sent, a key's name, a
route the key may not use by name, or the upstream's credential. The key's name appears
on the access and debug log lines (``"key"``), the key itself nowhere.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Iterable
from dataclasses import dataclass

from bridge_rules.proxy.errors import ProxyError
from bridge_rules.proxy.keyfile import KeySpec, digest, read_keys

_X_API_KEY = b"x-api-key"
_AUTHORIZATION = b"authorization"
CREDENTIAL_HEADERS = frozenset({_X_API_KEY, _AUTHORIZATION})
"""The client's credentials: never sent upstream when ``serve`` has keys."""
_BEARER = b"bearer"
_CREDENTIALS = re.compile(rb"([!#$%&'*+.^_`|~0-9A-Za-z-]+)[ \t]+(.*)", re.DOTALL)
"""``auth-scheme 1*SP token`` (RFC 9110 11.4), the run of spaces or tabs taken whole."""
NO_KEY = (
    "this proxy needs a client key: send it as x-api-key or Authorization: Bearer "
    "(bridge-rules keys new NAME makes one)"
)
BAD_KEY = "the client key sent is not one this proxy knows (revoked or mistyped?)"
TWO_KEYS = "the request carries more than one client key; send one"


def presented(headers: Iterable[tuple[bytes, bytes]]) -> bytes | None:
    """The one key the request carries, or None; ``ProxyError`` 401 when it carries two
    different ones (ASGI header names are lowercase)."""
    found: set[bytes] = set()
    for name, value in headers:
        if name == _X_API_KEY:
            key = value.strip(b" \t")
        elif name == _AUTHORIZATION:
            found_bearer = _CREDENTIALS.fullmatch(value.strip(b" \t"))
            if found_bearer is None or found_bearer[1].lower() != _BEARER:
                continue
            key = found_bearer[2]
        else:
            continue
        if key:
            found.add(key)
    if len(found) > 1:
        raise ProxyError(401, TWO_KEYS, close=True)
    return next(iter(found), None)


@dataclass(frozen=True)
class Caller:
    """The key a request was let in with."""

    spec: KeySpec

    @property
    def name(self) -> str:
        return self.spec.name

    def upstream_auth(self) -> list[tuple[bytes, bytes]]:
        """The headers that stand for the client's key upstream: the key's upstream
        credential, or none (the client's key is the proxy's, never the upstream's)."""
        cred = self.spec.credential
        return [] if cred is None else [(_X_API_KEY, cred.encode("latin-1"))]

    def may_use(self, route: str) -> bool:
        return not self.spec.routes or route in self.spec.routes

    @property
    def pinned(self) -> str | None:
        """The one route this key is bound to, whatever it asks for."""
        return self.spec.routes[0] if len(self.spec.routes) == 1 else None


class KeyRing:
    """The keys ``serve`` accepts now; swapped whole on reload."""

    def __init__(self, specs: Iterable[KeySpec], path: str | None = None) -> None:
        self.specs = tuple(specs)
        self.path = path

    @classmethod
    def load(cls, path: str) -> KeyRing:
        """``path`` read (``KeysError`` with located problems when it cannot be used)."""
        return cls(read_keys(path), path)

    def find(self, key: bytes) -> KeySpec | None:
        wanted = digest(key)
        match = None
        for spec in self.specs:  # no early exit: the time does not depend on which
            if hmac.compare_digest(wanted, spec.digest):
                match = spec
        return match

    def identify(self, headers: Iterable[tuple[bytes, bytes]]) -> Caller:
        """The caller, or ``ProxyError`` 401 (``authentication_error``)."""
        key = presented(headers)
        if key is None:
            raise ProxyError(401, NO_KEY, close=True)
        spec = self.find(key)
        if spec is None:
            raise ProxyError(401, BAD_KEY, close=True)
        return Caller(spec)

    def admin(self, headers: Iterable[tuple[bytes, bytes]]) -> Caller:
        """An admin caller, or ``ProxyError`` 401, or 403 for a key that is not one."""
        caller = self.identify(headers)
        if not caller.spec.admin:
            raise ProxyError(403, "this key may not read the proxy's metrics or status")
        return caller


def refused_route() -> ProxyError:
    return ProxyError(403, "this key may not use the route the request asks for")
