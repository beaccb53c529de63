"""The route table (issue 36.3) against what it is declared to be, from outside.

- ``docs/proxy.md#endpoints`` is parsed as plain markdown and must list the table's paths,
  methods and flags, so the two cannot drift.
- A real ``serve`` (two workers, a read-only route and a default one, a loopback upstream)
  answers every entry with every method it declares; an operator entry never reaches the
  upstream, any other does; a rewritten entry's body has the route's denied tools taken out
  upstream, which is the rewrite seen from the upstream's side.
- Near-miss spellings of every entry (case, percent-encoding, doubled slashes, dot segments,
  trailing slashes, ``;params``, the ``/r/<route>/`` prefix, an unknown route), and paths of
  no entry, get what the dispatch at main 38db0a5 gave them, with routes and without: that
  decision is copied below with its literals, as it was before the table, and compared
  with what the upstream receives (path, and whether pi's ``read`` became ``Read``) and
  what the client gets (an answer of the proxy's own, a 404).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from tests.budget import examples
from tests.hostile.http_kit import READ_CALL, status_of
from tests.hostile.path_kit import ROUTES, char, send, two_routes
from tests.hostile.path_kit import tools_in as upstream_tools
from tests.proxy.canned import Canned

from bridge_rules.proxy.endpoints import ENDPOINTS, ROUTE_PREFIX
from bridge_rules.proxy.paths import canonical, readings
from bridge_rules.proxy.paths import raw as quoted

DOC = Path(__file__).resolve().parents[2] / "docs" / "proxy.md"
DENIED = {"write", "edit", "Write", "Edit"}
HOWS = ["same", "same", "same", "case", "pct", "pct-lower"]


# ------------------------------------------------------------------ the docs
def documented() -> set[tuple[str, tuple[str, ...], bool, bool]]:
    """(path, methods, rewritten, operator) for each row of the list under ``## Endpoints``."""
    rows: set[tuple[str, tuple[str, ...], bool, bool]] = set()
    section = DOC.read_text(encoding="utf-8").split("\n## Endpoints\n", 1)[1].split("\n## ", 1)[0]
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or cells[0] in ("methods", "---"):
            continue
        methods = tuple(re.findall(r"`([^`]+)`", cells[0]))
        (path,) = re.findall(r"`([^`]+)`", cells[1])
        rows.add((path, methods, cells[2] == "yes", cells[3] == "yes"))
    return rows


def test_the_docs_list_is_the_table() -> None:
    table = {(e.path, e.methods, e.rewritten, e.operator) for e in ENDPOINTS}
    assert documented() == table


def test_the_table_names_each_path_once() -> None:
    assert len({e.name for e in ENDPOINTS}) == len({e.path for e in ENDPOINTS}) == len(ENDPOINTS)


# ------------------------------------------------------------------ a real serve
@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Canned, str]]:
    with two_routes(tmp_path_factory.mktemp("endpoints")) as served:
        yield served


@pytest.fixture(scope="module")
def plain() -> Iterator[tuple[Canned, str]]:
    """``serve`` without routes or a policy: near misses are forwarded, as before."""
    from serve_process import serving

    with Canned() as up:
        up.reply.body = [READ_CALL]
        with serving("--upstream", up.url) as url:
            yield up, url


def concrete() -> Iterator[tuple[str, str, bool, bool]]:
    """(method, path, rewritten, operator) for each entry and method, a prefix under the
    read-only route in front of each entry the upstream answers."""
    for e in ENDPOINTS:
        methods = ("GET", "POST") if e.methods == ("*",) else e.methods
        for method in methods:
            if not e.prefix:
                yield method, e.path, e.rewritten, e.operator
                continue
            for inner in ENDPOINTS:
                if not inner.prefix and not inner.operator:
                    path = e.path.replace("<route>", "strict") + inner.path.lstrip("/")
                    yield method, path, inner.rewritten and method in inner.methods, False


@pytest.mark.parametrize(("method", "path", "rewritten", "operator"), list(concrete()))
def test_every_entry_is_answered(
    served: tuple[Canned, str], method: str, path: str, rewritten: bool, operator: bool
) -> None:
    up, url = served
    since = len(up.seen)
    answer = send(url, method, path)
    assert status_of(answer) not in (0, 404, 500), answer[:300]
    seen = up.seen[since:]
    assert len(seen) == (0 if operator else 1), answer[:300]
    if seen and path.startswith(ROUTE_PREFIX):  # the read-only route: its policy is seen
        stripped = not upstream_tools(seen[0].body) & DENIED
        assert stripped == rewritten, (path, seen[0].body[:200])


# ------------------------------------------------------------------ main's dispatch
OLD_REWRITTEN = frozenset({"/v1/messages", "/v1/messages/count_tokens"})
OLD_FAMILY = re.compile(r"(^|/)messages(/|$)")
OLD_OWN = {(m, p) for m in ("GET", "HEAD") for p in ("/healthz", "/readyz", "/metrics")}


def old_near_miss(path: str, raw: str) -> bool:
    if canonical(path) in OLD_REWRITTEN:
        return False
    return any(OLD_FAMILY.search(r) for p in (path, raw) for r in readings(p))


def old_decision(method: str, raw: str, routed: bool) -> tuple[str, str | None]:
    """What main's app did with ``method raw`` with this file's routes (``routed``) or none:
    "own", "404" or "forward", and the canonical path forwarded when it is a rewritten one."""
    path = unquote(raw)
    if (method, path) in OLD_OWN:
        return "own", None
    fixed = canonical(path)
    if routed and fixed.startswith("/r/"):
        name, slash, rest = fixed[3:].partition("/")
        if name not in ROUTES:
            return "404", None
        path = (slash + rest) or "/"
        prefix = f"/r/{name}/"
        raw = raw[len(prefix) - 1 :] if raw.startswith(prefix) else quoted(path).decode()
    if canonical(path) in OLD_REWRITTEN:
        return "forward", canonical(path)
    if routed and old_near_miss(path, raw):
        return "404", None
    return "forward", None


SLASHES = ["/"] * 8 + ["//", "/./", "/x/../", "%2F", "/.%2E/"]


@st.composite
def spelling(draw: st.DrawFn) -> str:
    entry = draw(st.sampled_from([*ENDPOINTS, None]))
    if entry is None:  # a path of no entry
        base = draw(st.sampled_from(["/v1/models", "/v1/complete", "/", "/v1/messages/batches"]))
    elif entry.prefix:
        name = draw(st.sampled_from([*ROUTES, "nope", "Strict"]))
        inner = draw(st.sampled_from([e.path for e in ENDPOINTS if not e.prefix]))
        base = entry.path.replace("<route>", name) + inner.lstrip("/")
    else:
        base = entry.path
    out = ""
    for i, segment in enumerate(base.split("/")[1:]):
        slash = draw(st.sampled_from(SLASHES if i else ["/", "/", "//", "/./"]))
        plain = draw(st.booleans()) or draw(st.booleans())  # most segments as written
        out += slash + (segment if plain else "".join(draw(char(c, HOWS)) for c in segment))
    return out + draw(st.sampled_from([""] * 6 + ["/", "%2F", ";x", "/."]))


@settings(max_examples=examples(150), deadline=None, suppress_health_check=list(HealthCheck))
@given(method=st.sampled_from(["GET", "POST"]), raw=spelling(), routed=st.booleans())
def test_spellings_are_dispatched_as_main_dispatched_them(
    request: pytest.FixtureRequest, method: str, raw: str, routed: bool
) -> None:
    """The rewrite is seen upstream: the default rules send pi's ``read`` as ``Read``."""
    up, url = request.getfixturevalue("served" if routed else "plain")
    since = len(up.seen)
    answer = send(url, method, raw)
    status, seen = status_of(answer), up.seen[since:]
    kind, fixed = old_decision(method, raw, routed)
    rewritten = method == "POST" and fixed is not None
    event(f"{'routed ' if routed else ''}{kind}{' rewritten' if rewritten else ''}")
    assert status not in (0, 500), answer[:300]
    if kind == "forward":
        assert len(seen) == 1, (raw, answer[:300])
        if fixed is not None:
            assert seen[0].path == fixed
        assert ("read" not in upstream_tools(seen[0].body)) == rewritten, seen[0].body[:200]
    else:
        assert not seen, (raw, kind)
        assert (status == 404) == (kind == "404"), (raw, answer[:300])
