"""``routes:`` of ``serve --config FILE`` as written, checked and serialisable.

Read before the server stack is imported (standard library and the schema target names
only), so a bad route is reported as fast as a bad option; :mod:`bridge_rules.proxy.routes`
serves them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bridge_rules.diagnostics import did_you_mean
from bridge_rules.proxy.kinds import route_problem
from bridge_rules.proxy.settings import ROUTE_SETTINGS

if TYPE_CHECKING:
    from bridge_rules.source import SourceMap, Span

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
ROUTE_WHERE = "route:"
"""``where`` key prefix for a route's place in ``--config FILE`` (``route:<name>``)."""
_KEYS = ("name", *ROUTE_SETTINGS, "target", "policy", "model", "default")
"""A route's keys: its name, the serve settings a route may set for itself (declared in
proxy/settings.py), and the keys only a route has."""


@dataclass(frozen=True)
class RouteSpec:
    """One entry of ``routes:`` as written: serialisable, so ``--workers`` rebuild it."""

    name: str
    rules: tuple[str, ...] = ()
    """Rule files (empty: ``serve``'s own ``rules``)."""
    upstream: str | None = None
    """What a registered upstream kind claims (an http(s) URL, ``claude-code``,
    :mod:`bridge_rules.proxy.kinds`); None: ``serve``'s ``upstream``."""
    target: str | None = None
    """A schema target replacing the rules' ``schemas.target`` (docs/schemas.md)."""
    policy: tuple[str, ...] = ()
    """Capability switches on for every request of the route (docs/policy.md)."""
    model: str | None = None
    """A glob over the request's model id that picks this route."""
    default: bool = False

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> RouteSpec:
        return cls(**{**raw, "rules": tuple(raw.get("rules") or ()),
                      "policy": tuple(raw.get("policy") or ())})  # fmt: skip


# ------------------------------------------------------------------ reading
def names_of(value: Any) -> tuple[str, ...] | None:
    """A name or a list of names as written in YAML (``rules: pi``, ``policy: [a, b]``), or
    None for any other shape; the keys file reads its lists the same way."""
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return None


def _targets() -> tuple[str, ...]:
    """The schema targets (imported only when a route names one: it brings the models)."""
    from bridge_rules.engine import SCHEMA_TARGETS

    return SCHEMA_TARGETS


def _one(
    raw: Any, smap: SourceMap, path: tuple[Any, ...]
) -> tuple[RouteSpec | None, list[tuple[str, str]]]:
    """One route, or None, and (message, where) for every problem in it: each unknown key
    at its own line with a did-you-mean, each message naming the route when it has a name."""
    at = f"--config {smap.value_span(path)}"
    if not isinstance(raw, dict):
        return None, [("each route must be a mapping (name: ..., rules: ...)", at)]
    problems: list[tuple[str, str]] = []
    label = f"route '{raw['name']}': " if isinstance(raw.get("name"), str) else ""

    def place(key: str) -> str:
        return f"--config {smap.value_span((*path, key))}"

    for key in (k for k in raw if k not in _KEYS):
        hint = did_you_mean(str(key), _KEYS) or f"known: {', '.join(_KEYS)}"
        where = f"--config {smap.key_span((*path, key))}"
        problems.append((f"{label}unknown route key '{key}'; {hint}", where))
    name = raw.get("name")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        problems.append(("a route needs a name of letters, digits, '_', '.' or '-'", at))
    values: dict[str, Any] = {}
    for key in ("rules", "policy"):
        if key in raw:
            got = names_of(raw[key])
            if got is None:
                problems.append(
                    (label + f"route key '{key}' takes a name or a list of names", place(key))
                )
            values[key] = got or ()
    for key in ("upstream", "target", "model"):
        if key in raw:
            if not isinstance(raw[key], str):
                problems.append((label + f"route key '{key}' takes one string", place(key)))
            else:
                values[key] = raw[key]
    if "upstream" in values:
        bad = route_problem(values["upstream"])
        if bad is not None:
            problems.append((label + bad, place("upstream")))
    target = values.get("target")
    if target is not None and target != "none" and target not in _targets():
        known = ", ".join((*_targets(), "none"))
        problems.append(
            (label + f"unknown schema target '{target}' (known: {known})", place("target"))
        )
    if "default" in raw:
        if not isinstance(raw["default"], bool):
            problems.append((label + "route key 'default' takes true or false", place("default")))
        values["default"] = raw["default"] is True
    if problems:
        return None, problems
    return RouteSpec(name=name, **values), []  # type: ignore[arg-type]


def parse_routes(
    value: Any, smap: SourceMap, key: str
) -> tuple[tuple[RouteSpec, ...], list[tuple[str, str]]]:
    """``routes:`` of a settings file: the routes, and (message, where) for each problem."""
    if not isinstance(value, list) or not value:
        return (), [("'routes' takes a list of routes", f"--config {smap.value_span((key,))}")]
    routes: list[RouteSpec] = []
    problems: list[tuple[str, str]] = []
    for index, raw in enumerate(value):
        at = f"--config {smap.value_span((key, index))}"
        route, found = _one(raw, smap, (key, index))
        problems += found
        if route is None:
            continue
        if any(r.name == route.name for r in routes):
            problems.append((f"two routes are named '{route.name}'", at))
        if route.default and any(r.default for r in routes):
            problems.append(("only one route can be the default", at))
        routes.append(route)
    return tuple(routes), problems


def route_places(value: Any, smap: SourceMap, key: str) -> dict[str, str]:
    """``route:<name>`` -> where that route is written (``--config serve.yaml:5:5``), for
    problems found once every setting is known (a route with no upstream to use)."""
    if not isinstance(value, list):
        return {}
    return {
        f"{ROUTE_WHERE}{raw['name']}": f"--config {smap.value_span((key, index))}"
        for index, raw in enumerate(value)
        if isinstance(raw, dict) and isinstance(raw.get("name"), str)
    }


def model_places(value: Any, smap: SourceMap, key: str) -> dict[str, Span]:
    """Route name -> where its ``model:`` glob is written, for what lint finds about the
    models a route fixes (BR322, bridge_rules.lint.route_models)."""
    if not isinstance(value, list):
        return {}
    return {
        raw["name"]: smap.value_span((key, index, "model"))
        for index, raw in enumerate(value)
        if isinstance(raw, dict) and isinstance(raw.get("name"), str) and "model" in raw
    }
