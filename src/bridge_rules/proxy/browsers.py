"""Requests from web pages are refused: an ``Origin`` not allowed, a ``Host`` not ours.

``serve`` listens on loopback, and a web page open on the same machine can reach loopback:
a ``text/plain`` POST needs no CORS preflight, and with DNS rebinding (a name of the
attacker's that resolves to 127.0.0.1) the page even reads the answer. Every agent this
proxy serves (the SDKs, pi, opencode, curl) sends no ``Origin`` and a loopback ``Host``;
a browser always sends ``Host``, and ``Origin`` on every POST. So, before any route:

* a request with an ``Origin`` is refused (403) unless that origin is allowed
  (``--allow-origin``; ``*``: any);
* a request whose ``Host`` names neither the listen address, ``localhost``, a loopback
  address, nor an allowed name (``--allow-host``; ``*``: any) is refused (403). The port is
  not compared (a reverse proxy may front another). Listening on every interface
  (``--host 0.0.0.0`` or ``::``), an IP address is accepted too: no DNS answer can
  rebind an address, only a name.

Both hold for every path and every upstream kind (HTTP and ``claude-code``).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

ANY = "*"
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
WILDCARDS = frozenset({"0.0.0.0", "::", ""})
KNOWN_HOSTS = 64


def origin_key(origin: str) -> str:
    """An origin as compared: lower case, without a trailing ``/``."""
    return origin.strip().lower().rstrip("/")


def host_name(value: str) -> str | None:
    """The name in a ``Host`` value (``example.com:8787``, ``[::1]:1``), lower case and
    without a trailing dot; None when it is not a host at all."""
    try:
        parts = urlsplit("//" + value.strip())
        name = parts.hostname
        _ = parts.port  # a port that is not a number is not a Host
    except ValueError:
        return None
    if not name or parts.path or parts.query or parts.fragment or parts.username:
        return None
    return name.rstrip(".")


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def origin_problem(value: str) -> str | None:
    """Why ``value`` cannot be an ``--allow-origin`` entry, or None."""
    if value in (ANY, "null"):
        return None
    parts = urlsplit(value)
    try:
        _ = parts.port
    except ValueError:
        return f"--allow-origin takes scheme://host[:port], got '{value}'"
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path.strip("/"):
        return f"--allow-origin takes scheme://host[:port] (or * or null), got '{value}'"
    if parts.query or parts.fragment or parts.username:
        return f"--allow-origin takes scheme://host[:port] only, got '{value}'"
    return None


def host_problem(value: str) -> str | None:
    """Why ``value`` cannot be an ``--allow-host`` entry, or None."""
    if value == ANY or (host_name(value) is not None and "/" not in value):
        return None
    return f"--allow-host takes a host name or address (or *), got '{value}'"


@dataclass(frozen=True)
class BrowserRules:
    origins: frozenset[str]
    hosts: frozenset[str]
    any_origin: bool = False
    any_host: bool = False
    addresses: bool = False
    """Listening on every interface: any IP address is a host of ours."""
    _ours: dict[bytes, None] = field(default_factory=dict, compare=False, repr=False)
    """``Host`` values already accepted, as sent (a client sends the same one every time;
    reading it again cost more than the rest of this check). At most :data:`KNOWN_HOSTS`."""

    @classmethod
    def of(cls, listen: str, origins: Iterable[str], hosts: Iterable[str]) -> BrowserRules:
        listening = listen.strip("[]").lower()
        named = {h for h in (host_name(x) for x in hosts if x != ANY) if h is not None}
        if listening not in WILDCARDS:
            named.add(listening)
        return cls(
            origins=frozenset(origin_key(o) for o in origins if o != ANY),
            hosts=frozenset(named | LOOPBACK_NAMES),
            any_origin=ANY in origins,
            any_host=ANY in hosts,
            addresses=listening in WILDCARDS,
        )

    def refusal(self, headers: Iterable[tuple[bytes, bytes]]) -> str | None:
        """Why a request with these (ASGI, lower-cased) headers is refused, or None."""
        for name, value in headers:
            if name == b"origin" and not self.any_origin:
                origin = value.decode("latin-1")
                if origin_key(origin) not in self.origins:
                    return (
                        f"requests from the web origin {origin[:100]!r} are refused "
                        "(bridge-rules serve --allow-origin)"
                    )
            elif name == b"host" and not self.any_host and value not in self._ours:
                host = value.decode("latin-1")
                found = host_name(host)
                if found is None or not (
                    found in self.hosts or (self.addresses and _is_address(found))
                ):
                    return (
                        f"requests for the host {host[:100]!r} are refused: it is not the "
                        "address serve listens on (bridge-rules serve --allow-host)"
                    )
                if len(self._ours) < KNOWN_HOSTS:
                    self._ours[bytes(value)] = None
        return None
