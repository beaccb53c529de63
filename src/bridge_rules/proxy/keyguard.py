"""``serve --keys``: what the app asks of the client keys, in one object per worker.

:class:`KeyGuard` holds the :class:`~bridge_rules.proxy.keys.KeyRing` (swapped whole when
the keys file is read again, on SIGHUP with the rules) and the shared
:class:`~bridge_rules.proxy.limits.Counters`. It tells the app who is calling (a 401
otherwise, before the body is read), what stands for the client's key upstream, and holds
a request's place under its key's limits while it runs (a 429 with ``retry-after``
otherwise, counted on ``/metrics`` by key name and limit).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from bridge_rules.proxy.errors import ProxyError
from bridge_rules.proxy.keys import Caller, KeyRing
from bridge_rules.proxy.limits import Counters

if TYPE_CHECKING:
    from bridge_rules.engine import Runtime
    from bridge_rules.proxy.config import ProxyConfig
    from bridge_rules.proxy.forward import Exchange
    from bridge_rules.proxy.obs import AccessRecord

PolicyCheck = Callable[[list[tuple[str, tuple[str, ...]]]], None]
"""Narrows each (route, switches) a key holds; raises ``ValueError`` for an unknown switch."""


class KeyGuard:
    def __init__(self, ring: KeyRing, counters: Counters, check: PolicyCheck) -> None:
        self.ring = ring
        self.counters = counters
        self._check = check
        check(policies_of(ring))

    @classmethod
    def of(cls, config: ProxyConfig, check: PolicyCheck) -> KeyGuard | None:
        """The guard ``config.keys`` asks for (``KeysError``, ``ValueError`` when its keys
        cannot be used), or None without keys."""
        if not config.keys:
            return None
        return cls(KeyRing.load(config.keys), Counters.from_env(), check)

    def reload(self) -> None:
        """Read the keys file again; on ``KeysError`` or ``ValueError`` the old keys stay."""
        if self.ring.path is None:
            return
        ring = KeyRing.load(self.ring.path)
        self._check(policies_of(ring))
        self.ring = ring

    def close(self) -> None:
        self.counters.close()

    def identify(self, ex: Exchange) -> Caller:
        """The request's caller, named on its log line, its key replaced for the upstream."""
        caller = self.ring.identify(ex.scope["headers"])
        ex.reply.record.key = caller.name
        ex.upstream_auth = caller.upstream_auth()
        ex.switches = caller.spec.policy
        return caller

    def admin(self, headers: Any) -> Caller:
        return self.ring.admin(headers)

    @contextmanager
    def limited(
        self,
        caller: Caller,
        record: AccessRecord,
        session: bool,
    ) -> Generator[None, None, None]:
        """Hold the request's place under its key's limits while it is rewritten and
        answered; a 429 when one is reached, before any work is spent on it."""
        refused = self.counters.acquire(caller.name, caller.spec.limits, session)
        if refused is not None:
            record.limit = refused.limit
            retry = (b"retry-after", str(refused.retry_after).encode())
            raise ProxyError(429, refused.message, headers=(retry,))
        try:
            yield
        finally:
            self.counters.release(caller.name, session)


def check_policies(
    policies: list[tuple[str, tuple[str, ...]]],
    routes: Mapping[str, Runtime],
    served: Runtime,
) -> None:
    """Each (route, switches) a key holds, checked once, at start or reload, never per
    request: ``ValueError`` for a route ``serve`` does not have, and ``PolicyError`` (a
    ``ValueError``) for a switch that route's rules (every route's, for a key with no
    routes; without routes, ``served``'s) do not define."""
    for name, switches in policies:
        if name and name not in routes:
            known = ", ".join(routes) or "none"
            raise ValueError(f"a key names route '{name}', which serve does not have "
                             f"(routes: {known})")  # fmt: skip
        chosen = [routes[name]] if name else list(routes.values()) or [served]
        for runtime in chosen:
            runtime.narrowed(switches)


def policies_of(ring: KeyRing) -> list[tuple[str, tuple[str, ...]]]:
    """(route, switches) for each route each key with switches may use ("" for any)."""
    return [
        (route, spec.policy)
        for spec in ring.specs
        for route in (spec.routes or ("",))
        if spec.policy or route
    ]
