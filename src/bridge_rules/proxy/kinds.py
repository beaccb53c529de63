"""Upstream kinds: what answers the requests the proxy does not answer itself.

``serve --upstream`` and a route's ``upstream:`` name one value; the registered kinds
decide what it is. Each kind is a class registered here (:func:`register`) that
recognises its own spelling, reports its own problems, and opens the :class:`Upstream`
a worker sends requests to. The rest of the proxy asks this registry and holds the
instance; it never compares a kind's name.

Standard library only: ``serve`` checks its settings before the server stack is
imported, so a kind's spelling and problems are judged here, and the kind imports its
serving side only in :meth:`UpstreamKind.open`. The built-in kinds are named by module
(as pytest names its built-in plugins) and imported on first use: HTTP below, Claude
Code in :mod:`bridge_rules.proxy.claude_code.kind`. docs/proxy.md#upstream-kinds says
how to add one.
"""

from __future__ import annotations

import importlib
from collections.abc import Coroutine, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Protocol
from urllib.parse import urlsplit, urlunsplit

if TYPE_CHECKING:
    from bridge_rules.proxy.config import ProxyConfig
    from bridge_rules.proxy.forward import Exchange

Problem = tuple[str, str, bool]
"""A setting's problem: (the ``serve`` option to mend, the message, whether a warning)."""


class Upstream(Protocol):
    """One worker's upstream: where a request goes once the rules have rewritten it."""

    def prepare(self) -> None:
        """Made ready inside the worker's event loop, before the first request."""

    def send(self, ex: Exchange, rewritten: bool) -> Coroutine[Any, Any, None]:
        """The work that answers ``ex`` (``rewritten``: a Messages request the rules
        rewrote); a fault is a :class:`~bridge_rules.proxy.errors.ProxyError`."""
        ...

    def holds_session(self, rewritten: bool) -> bool:
        """Whether answering a request (``rewritten`` as for :meth:`send`) holds one of
        this upstream's sessions: counted against a client key's ``sessions`` limit."""
        ...

    async def readiness(self) -> str | None:
        """Why this upstream cannot answer now (``/readyz``), or None."""

    async def aclose(self) -> None:
        """The worker is stopping: let go of connections and processes."""


class UpstreamKind:
    """A kind of upstream, as ``serve`` and ``routes:`` spell it. Subclasses override
    :meth:`claims` and :meth:`open`, and the problem methods when a value can be wrong."""

    spelled: ClassVar[str]
    """How the kind is written, for messages: ``an http(s) URL``, ``claude-code``."""
    owner_credentials: ClassVar[bool] = False
    """The upstream answers with credentials the proxy holds, whoever the client is (the
    Claude Code CLI's login): ``serve`` then refuses an address other than loopback
    without client keys (``proxy.keyfile.keys_problems``)."""

    def claims(self, value: str) -> bool:
        """Whether ``value`` names this kind (its spelling, not whether it is right)."""
        raise NotImplementedError

    def problems(self, value: str, options: Mapping[str, Any]) -> tuple[str, list[Problem]]:
        """``serve --upstream value`` with these options: the value as served, and the
        problems of the value and of the kind's own settings."""
        return value, []

    def route_problem(self, value: str) -> str | None:
        """What is wrong with a route's ``upstream: value``, or None."""
        return None

    def served(self, value: str) -> str:
        """A route's ``upstream: value`` as the upstream is given it."""
        return value

    def open(self, config: ProxyConfig) -> Upstream:
        """The upstream for ``config`` (whose ``upstream`` this kind claims); raises
        ImportError or ValueError when it cannot be made (``serve`` reports either)."""
        raise NotImplementedError


_KINDS: list[UpstreamKind] = []
_BUILTIN = ["bridge_rules.proxy.claude_code.kind"]
"""Modules of the built-in kinds besides HTTP, imported (so registered) on first use."""


def register(kind: type[UpstreamKind]) -> type[UpstreamKind]:
    """Add a kind (a class decorator); it is asked before the kinds already registered,
    and before HTTP, which takes what no other kind claims."""
    _KINDS.insert(0, kind())
    return kind


def unregister(kind: type[UpstreamKind]) -> None:
    _KINDS[:] = [k for k in _KINDS if type(k) is not kind]


def kinds() -> list[UpstreamKind]:
    """Every kind, in the order a value is offered to them (HTTP last)."""
    while _BUILTIN:
        importlib.import_module(_BUILTIN.pop())
    return [*_KINDS, HTTP]


def kind_of(value: str) -> UpstreamKind:
    """The kind that claims ``value``; HTTP when no other does (it reports what is wrong)."""
    return next(k for k in kinds() if k is HTTP or k.claims(value))


def open_upstream(config: ProxyConfig) -> Upstream:
    """The upstream ``config.upstream`` names, opened by its kind."""
    return kind_of(config.upstream).open(config)


def route_problem(value: str) -> str | None:
    return kind_of(value).route_problem(value)


def spelled() -> str:
    """Every kind as a route's ``upstream:`` may be written: ``an http(s) URL or claude-code``."""
    return " or ".join(k.spelled for k in (HTTP, *kinds()[:-1]))


# ------------------------------------------------------------------ HTTP
def normalise_upstream(url: str) -> tuple[str, str | None]:
    """The upstream without a trailing ``/`` or ``/v1`` (the proxy adds ``/v1/...`` itself),
    and a warning when it had ``/v1``; query and fragment are refused by the caller."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    warning = None
    if path.endswith("/v1"):
        path = path[: -len("/v1")]
        warning = (
            f"--upstream ends in /v1; using {urlunsplit(parts._replace(path=path))} "
            "(the proxy forwards /v1/messages itself, so /v1 would be doubled)"
        )
    return urlunsplit(parts._replace(path=path)), warning


class HttpKind(UpstreamKind):
    """An http(s) URL: requests forwarded through the worker's connection pool
    (:mod:`bridge_rules.proxy.httpupstream`)."""

    spelled = "an http(s) URL"

    def claims(self, value: str) -> bool:
        parts = urlsplit(value)
        return parts.scheme in ("http", "https") and bool(parts.netloc)

    def problems(self, value: str, options: Mapping[str, Any]) -> tuple[str, list[Problem]]:
        parts = urlsplit(value)
        if not self.claims(value):
            return value, [("upstream", f"--upstream must be {self.spelled}, got '{value}'", False)]
        if parts.query or parts.fragment:
            message = f"--upstream takes no query string or fragment, got '{value}'"
            return value, [("upstream", message, False)]
        if "@" in parts.netloc:
            message = (
                "--upstream takes no user name or password (user:pass@host, deprecated by "
                "RFC 9110); the client's own credentials headers go upstream as sent"
            )
            return value, [("upstream", message, False)]
        served, notice = normalise_upstream(value)
        return served, [] if notice is None else [("upstream", notice, True)]

    def route_problem(self, value: str) -> str | None:
        parts = urlsplit(value)
        if not self.claims(value):
            return f"upstream must be {spelled()}, got '{value}'"
        if parts.query or parts.fragment or "@" in parts.netloc:
            return f"upstream takes no query string, fragment or user name, got '{value}'"
        return None

    def served(self, value: str) -> str:
        return normalise_upstream(value)[0]

    def open(self, config: ProxyConfig) -> Upstream:
        from bridge_rules.proxy.httpupstream import HttpUpstream

        return HttpUpstream(config)


HTTP = HttpKind()
