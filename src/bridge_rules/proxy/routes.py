"""Several agents through one ``serve``: routes, and what a request chooses by its headers.

``serve --config`` may list ``routes:``, each with its own rules, upstream, schema target
and policy switches (docs/proxy.md#routes). A request picks its route by, in this order:

1. its path: ``/r/<route>/v1/messages`` (the prefix is taken off before forwarding);
2. the ``x-bridge-rules-route`` header;
3. its model id, against each route's ``model`` glob, in the order the routes are listed.

A request none of them picks goes to the route marked ``default: true``, or gets a 404
that lists the routes. Without ``routes:`` none of this runs and ``serve`` is what its
single-route flags say.

``x-bridge-rules-policy: read_only, no_web`` turns capability switches on for one request,
besides the route's own (docs/policy.md). The switches travel with the request into its
:class:`~bridge_rules.transform.turn.Turn` (``Engine.turn(body, policy=...)``), never into
a worker's state, and can only take tools away.

The upstream of a route is an instance of the kind its ``upstream:`` names
(:mod:`bridge_rules.proxy.kinds`: an http(s) URL, or ``claude-code``, whose Messages
requests the Claude Code CLI answers with ``serve``'s ``claude-*`` settings), opened by
:func:`route_upstream`.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bridge_rules import jsonio
from bridge_rules.diagnostics import RulesError
from bridge_rules.engine import Engine, PolicyError, parse_switches
from bridge_rules.proxy import paths
from bridge_rules.proxy.config import ProxyConfig
from bridge_rules.proxy.endpoints import ROUTE_PREFIX
from bridge_rules.proxy.errors import ProxyError
from bridge_rules.proxy.forward import Exchange
from bridge_rules.proxy.httpupstream import HttpUpstream
from bridge_rules.proxy.keys import Caller, refused_route
from bridge_rules.proxy.kinds import Upstream, kind_of
from bridge_rules.proxy.routespec import RouteSpec

if TYPE_CHECKING:
    from bridge_rules.proxy.upstream import Upstream as Pool

POLICY_HEADER = "x-bridge-rules-policy"
ROUTE_HEADER = "x-bridge-rules-route"
PREFIX = ROUTE_PREFIX
_POLICY_KEY = POLICY_HEADER.encode()
_ROUTE_KEY = ROUTE_HEADER.encode()


def policy_on(
    engine: Engine, headers: Iterable[tuple[bytes, bytes]], always: tuple[str, ...] = ()
) -> bool:
    """Whether a tool policy applies to a request: the rules' (a route's included), its
    client key's (``always``) or the one its ``x-bridge-rules-policy`` header turns on (an
    unknown switch counts: the request is refused either way)."""
    policy = engine.runtime.policy
    switches = (*always, *requested_switches(headers))
    if switches:
        try:
            policy = policy.narrowed(switches)
        except PolicyError:
            return True
    return policy.active


def requested_switches(headers: Iterable[tuple[bytes, bytes]]) -> tuple[str, ...]:
    """The switches every ``x-bridge-rules-policy`` header names, in order (ASGI headers:
    lowercased names)."""
    found: tuple[str, ...] = ()
    for key, value in headers:
        if key == _POLICY_KEY:
            found += parse_switches(value.decode("latin-1"))
    return found


# ------------------------------------------------------------------ serving
Build = Callable[[ProxyConfig], Engine]
"""``serve``'s rules from a config: ``proxy.app.build_engine``."""
Size = Callable[[Engine, ProxyConfig], None]
"""The message cache sized as configured: ``proxy.app.size_cache``."""


def route_upstream(config: ProxyConfig, spec: RouteSpec) -> Upstream:
    """What a route's requests are sent to, opened by the kind its ``upstream:`` (else
    ``serve``'s) names (``ImportError`` without a kind's package, ``ValueError`` for an
    unusable setting of it: ``serve`` reports either)."""
    url = config.upstream if spec.upstream is None else spec.upstream
    kind = kind_of(url)
    return kind.open(replace(config, upstream=kind.served(url)))


def make_upstream(config: ProxyConfig, spec: RouteSpec) -> tuple[Pool, Upstream | None]:
    """The route's upstream in the shape routes had before upstream kinds: its HTTP pool,
    and the upstream itself when it answers some requests other than by forwarding."""
    upstream = route_upstream(config, spec)
    if isinstance(upstream, HttpUpstream):
        return upstream.pool, None
    pool: Pool = upstream.pool  # type: ignore[attr-defined]  # claude-code's
    return pool, upstream


def route_engine(config: ProxyConfig, spec: RouteSpec, build: Build, size: Size) -> Engine:
    """The route's rules compiled (``RulesError`` when they do not load) with the bindings
    directory over them, retargeted, and narrowed by its switches (``PolicyError``)."""
    engine = build(replace(config, rules=spec.rules or config.rules))
    if config.bindings_dir:
        engine = engine.with_bindings(Path(config.bindings_dir))
    if spec.target is not None:
        engine = engine.retargeted(spec.target)
    if spec.policy:
        engine = engine.narrowed(spec.policy)
    size(engine, config)
    return engine


@dataclass(eq=False)
class Route:
    """A route being served: its engine (swapped on reload) and its upstream."""

    spec: RouteSpec
    engine: Engine
    upstream: Upstream
    reload_error: str | None = None
    """Why the last reload kept the old rules (``/readyz``); None when it did not fail."""
    model_re: re.Pattern[str] | None = field(default=None)

    def status(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "rules_hash": self.engine.runtime.rules.digest,
            "upstream": self.spec.upstream or "default",
        }
        if self.reload_error is not None:
            out["reload_failed"] = self.reload_error
        return out


def _model(body: bytes) -> Any:
    """The request's model id, for routes that match on it (None when there is none); the
    rest of the body is scanned, not built (a third of a parse, for a 1 MB body)."""
    try:
        return jsonio.top_field(body, "model")
    except ValueError:
        return None


def _raw_rest(scope: Mapping[str, Any], route: Route, rest: str) -> bytes:
    """The raw path without its route prefix (the path upstream is sent as written), or
    ``rest`` encoded again when the prefix was not written plainly (``/r/a%2Fv1/...``,
    ``/r/x/../a/...``): what goes upstream always starts with ``/``."""
    raw: bytes = scope.get("raw_path") or scope["path"].encode()
    prefix = f"{PREFIX}{route.spec.name}/".encode()
    if raw.startswith(prefix):
        return raw[len(prefix) - 1 :]
    return paths.raw(rest)


class NoRoute(LookupError):
    """No route picks the request and there is no default: a 404 listing the routes."""


class Router:
    """The routes of a ``serve --config``, matched per request (see the module doc)."""

    def __init__(
        self, config: ProxyConfig, specs: Iterable[RouteSpec], build: Build, size: Size
    ) -> None:
        self.config = config
        self._build, self._size = build, size
        self.routes: dict[str, Route] = {}
        for spec in specs:
            model_re = None
            if spec.model is not None:
                model_re = re.compile(fnmatch.translate(spec.model))
            upstream = route_upstream(config, spec)
            self.routes[spec.name] = Route(spec, self._engine(spec), upstream, model_re=model_re)
        self.default = next((r for r in self.routes.values() if r.spec.default), None)
        self.by_model = [r for r in self.routes.values() if r.model_re is not None]

    def _engine(self, spec: RouteSpec) -> Engine:
        return route_engine(self.config, spec, self._build, self._size)

    def by_path(self, path: str) -> tuple[Route, str] | None:
        """The route a ``/r/<route>/...`` path names, and the path without the prefix."""
        if not path.startswith(PREFIX):
            return None
        name, slash, rest = path[len(PREFIX) :].partition("/")
        route = self.routes.get(name)
        if route is None:
            raise NoRoute(f"no route named '{name}'")
        return route, slash + rest

    def choose(self, headers: Iterable[tuple[bytes, bytes]], model: Callable[[], Any]) -> Route:
        """The route the header or the model id picks, else the default (``NoRoute``)."""
        for key, value in headers:
            if key == _ROUTE_KEY:
                name = value.decode("latin-1").strip()
                route = self.routes.get(name)
                if route is None:
                    raise NoRoute(f"no route named '{name}' ({ROUTE_HEADER})")
                return route
        model_id = model() if self.by_model else None  # the body is parsed only for this
        if isinstance(model_id, str):
            for route in self.by_model:
                assert route.model_re is not None
                if route.model_re.match(model_id):
                    return route
        if self.default is None:
            raise NoRoute("no route matches the request and none is the default")
        return self.default

    def pick(
        self, ex: Exchange, caller: Caller | None = None, choice: bool = True
    ) -> tuple[Engine, Upstream]:
        """The engine and upstream of ``ex``'s route, its ``/r/<route>`` prefix taken off
        the path, its name on the access record; a 404 listing the routes when none.

        A client key (``caller``) bound to one route goes there whatever it asks; one whose
        key or ``serve`` has route choice off is not routed by header or model; a route
        the key may not use is a 403 that names no route."""
        scope = ex.scope
        try:
            found = self.by_path(paths.canonical(scope["path"]))
            if found is None:
                route = self._chosen(ex, caller, choice)
            else:
                route, rest = found
                if caller is not None and not caller.may_use(route.spec.name):
                    raise refused_route()
                rest = rest or "/"
                ex.scope = {**scope, "path": rest, "raw_path": _raw_rest(scope, route, rest)}
        except NoRoute as exc:
            if caller is not None:  # which routes exist is the operator's, not a client's
                raise refused_route() from None
            raise ProxyError(404, f"{exc}; the routes are {self.listing()}") from None
        ex.reply.record.route = route.spec.name
        return route.engine, route.upstream

    def _chosen(self, ex: Exchange, caller: Caller | None, choice: bool) -> Route:
        pinned = None if caller is None else caller.pinned
        if pinned is not None:
            return self.routes[pinned]
        if choice and (caller is None or caller.spec.route_choice):
            route = self.choose(ex.scope["headers"], lambda: _model(ex.body))
        elif self.default is not None and (
            caller is None or caller.may_use(self.default.spec.name)
        ):
            route = self.default
        elif caller is not None and caller.spec.routes:
            route = self.routes[caller.spec.routes[0]]
        else:
            raise NoRoute("route choice is off and no route is the default")
        if caller is not None and not caller.may_use(route.spec.name):
            raise refused_route()
        return route

    def listing(self) -> str:
        return ", ".join(f"{PREFIX}{name}/" for name in self.routes)

    def rebuild(self) -> list[tuple[Route, Engine | Exception]]:
        """Every route's rules compiled again (off the event loop); nothing swapped yet."""
        out: list[tuple[Route, Engine | Exception]] = []
        for route in self.routes.values():
            try:
                out.append((route, self._engine(route.spec)))
            except (RulesError, ValueError, OSError) as exc:  # ValueError: a PolicyError
                out.append((route, exc))
        return out

    @staticmethod
    def apply(results: list[tuple[Route, Engine | Exception]]) -> list[str]:
        """Swap in what :meth:`rebuild` made; a route whose rules failed keeps its old ones.
        Returns the routes that failed."""
        failed = []
        for route, made in results:
            if isinstance(made, Exception):
                route.reload_error = str(made).splitlines()[0] if str(made) else type(made).__name__
                failed.append(route.spec.name)
            else:
                route.engine, route.reload_error = made, None
        return failed

    def status(self) -> dict[str, Any]:
        return {name: route.status() for name, route in self.routes.items()}

    async def aclose(self) -> None:
        for route in self.routes.values():
            await route.upstream.aclose()
