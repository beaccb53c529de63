"""Every path the proxy answers, declared once: the route table.

The app's dispatch (``proxy.app``, ``proxy.ops``), the paths it rewrites and the near
misses of them it refuses (``proxy.paths``), what a response is read back through
(``proxy.forward``), the metrics' route labels (``proxy.metrics``) and the route prefix
(``proxy.routes``) are all read from :data:`ENDPOINTS`; ``docs/proxy.md#endpoints`` lists
the same table, and ``tests/proxy/test_endpoints.py`` fails when the two differ.

**Adding a path is one entry here** (and one row in that list). A path the upstream
answers (``GET /v1/models``, say) needs nothing else: its ``rewritten`` and
``answer_rewritten`` say what the proxy does to it on the way. A path the proxy answers
itself (``operator=True``) is answered by the handler its ``name`` is given to by the layer
that owns it (``ProxyApp`` or ``OpsApp``, :func:`dispatch`).

Every other path is forwarded as sent, except a near miss of a rewritten one under a
route or a policy (``proxy.paths``): the resources of the rewritten paths (``messages``)
are what a near miss is measured against.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

Handler = TypeVar("Handler", bound=Callable[..., object])


@dataclass(frozen=True)
class Endpoint:
    """One path the proxy answers, and what it does with it."""

    name: str
    """What the code calls it: the key a layer's handler is given under (:func:`dispatch`)."""
    path: str
    """The exact decoded path; for a prefix, the prefix with ``<route>`` for the name."""
    methods: tuple[str, ...]
    """The methods it answers (``*``: any, as the upstream under it does)."""
    about: str
    """One line, as ``docs/proxy.md#endpoints`` says it."""
    rewritten: bool = False
    """The request body goes through the rules (a turn) before it goes upstream."""
    answer_rewritten: bool = False
    """The answer comes back through the same turn, and a policy judges it."""
    operator: bool = False
    """Answered by the proxy itself, for whoever runs it; never forwarded."""
    prefix: bool = False
    """A prefix: the rest of the path is looked up in this table again."""


ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint(
        "messages",
        "/v1/messages",
        ("POST",),
        "the Messages API: the body rewritten by the rules, the answer rewritten back",
        rewritten=True,
        answer_rewritten=True,
    ),
    Endpoint(
        "count_tokens",
        "/v1/messages/count_tokens",
        ("POST",),
        "token counting: the body rewritten as for messages, the answer passed through",
        rewritten=True,
    ),
    Endpoint(
        "healthz",
        "/healthz",
        ("GET", "HEAD"),
        'liveness: 200 {"status": "ok"} while the process runs',
        operator=True,
    ),
    Endpoint(
        "readyz",
        "/readyz",
        ("GET", "HEAD"),
        "readiness: 200 when the rules are loaded and the upstream can answer, else 503",
        operator=True,
    ),
    Endpoint(
        "metrics",
        "/metrics",
        ("GET", "HEAD"),
        "Prometheus text format",
        operator=True,
    ),
    Endpoint(
        "route",
        "/r/<route>/",
        ("*",),
        "a serve --config route by name: the prefix is taken off and the rest served by it",
        prefix=True,
    ),
)

BY_NAME: Mapping[str, Endpoint] = {e.name: e for e in ENDPOINTS}
MESSAGES = BY_NAME["messages"].path
ROUTE_PREFIX = BY_NAME["route"].path.partition("<")[0]
"""``/r/``: what a path under a route starts with."""
REWRITTEN = frozenset(e.path for e in ENDPOINTS if e.rewritten)
"""The paths whose request bodies the rules rewrite (and the metrics name)."""
REWRITTEN_CALLS = frozenset((m, e.path) for e in ENDPOINTS if e.rewritten for m in e.methods)
ANSWER_REWRITTEN = frozenset(e.path for e in ENDPOINTS if e.answer_rewritten)
RESOURCES = frozenset(p.split("/")[2] for p in REWRITTEN)
"""The resource segment of each rewritten path (``messages``): a path with one such
segment that is not a rewritten path is a near miss (``proxy.paths``)."""


def dispatch(handlers: Mapping[str, Handler]) -> dict[tuple[str, str], Handler]:
    """(method, path) to handler, for the operator endpoints named in ``handlers``; a name
    that is not an operator endpoint of the table is a ``KeyError`` at start-up."""
    out: dict[tuple[str, str], Handler] = {}
    for name, handler in handlers.items():
        endpoint = BY_NAME[name]
        if not endpoint.operator:
            raise KeyError(f"{name} is not an endpoint the proxy answers itself")
        out.update(((method, endpoint.path), handler) for method in endpoint.methods)
    return out
