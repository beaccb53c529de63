"""Paths from the attacker's side (issue 34.4): every spelling of a route's Messages path
that a CDN, nginx or the upstream might read as ``/v1/messages`` (case, percent-encoding,
``%2F`` and ``%2E``, repeated slashes, dot segments, trailing slashes, ``;params``), sent
as raw bytes to a real ``serve`` with two workers and a read-only route.

The oracle is what a loopback upstream receives: whatever the spelling, no request there
carries a tool the route's policy denies, and no spelling gets a 500.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.budget import examples
from tests.hostile.http_kit import status_of
from tests.hostile.path_kit import char, send, tools_in, two_routes
from tests.proxy.canned import Canned

DENIED = {"write", "edit", "Write", "Edit", "NotebookEdit"}
HOWS = ["same", "same", "case", "fold", "pct", "pct-lower", "double"]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Canned, str]]:
    with two_routes(tmp_path_factory.mktemp("paths")) as served:
        yield served


@st.composite
def slash(draw: st.DrawFn) -> str:
    """A spelling of one ``/``. Not ``/.%2E/``: that is ``/../``, which takes the segment
    before it away (``/r/.%2E/strict/.%2E/v1/messages`` is ``/v1/messages``, the default
    route's path); ``/x/.%2E/`` goes into ``x`` and back."""
    return draw(st.sampled_from(
        ["/", "/", "//", "/./", "/x/../", "%2F", "%2f", "/%2E/", "/x/.%2E/", "/x/%2e%2E/"]
    ))  # fmt: skip


@st.composite
def spelling(draw: st.DrawFn) -> str:
    # The request target in absolute form too (RFC 9112 3.2.2), which a server must accept.
    out = draw(st.sampled_from(["", "", "", "http://127.0.0.1", "HTTP://x@127.0.0.1:1"]))
    out += draw(st.sampled_from(["/", "//", "/./"]))
    for i, segment in enumerate(["r", "strict", "v1", "messages"]):
        if i:
            out += draw(slash())
        out += "".join(draw(char(c, HOWS)) for c in segment)
    # A path ends where a reader ends it: a real query, or a ?, # or trailing dot that a
    # reader decoding the path and parsing it again, or a Windows server, drops.
    ends = ["", "", "/", "/.", "%2F", ";x", "/batches", "%20", "?beta=true",
            "%3Fbeta=true", "%3f", "%23x", "%253F", ".", "%2E", ".%20"]  # fmt: skip
    return out + draw(st.sampled_from(ends))


def post(url: str, path: str) -> bytes:
    return send(url, "POST", path)


def tools_upstream(up: Canned, since: int) -> set[str]:
    return set().union(*(tools_in(seen.body) for seen in up.seen[since:]))


@settings(max_examples=examples(150), deadline=None, suppress_health_check=list(HealthCheck))
@given(path=spelling())
def test_no_spelling_takes_denied_tools_upstream_nor_gives_a_500(
    served: tuple[Canned, str], path: str
) -> None:
    up, url = served
    since = len(up.seen)
    answer = post(url, path)
    assert status_of(answer) not in (0, 500), answer[:300]
    sent = tools_upstream(up, since)
    assert not sent & DENIED, (path, sent)


@pytest.mark.parametrize(
    "path",
    ["/r/strict//v1/messages", "/r/strict/v1/x/../messages", "/r/strict%2Fv1/messages",
     "/r/strict/v1/%6Dessages", "/r/x/../strict/v1/messages", "/r//strict/./v1/messages"],
)  # fmt: skip
def test_a_spelling_of_the_messages_path_is_that_path(
    served: tuple[Canned, str], path: str
) -> None:
    up, url = served
    since = len(up.seen)
    assert status_of(post(url, path)) == 200
    assert [s.path for s in up.seen[since:]] == ["/v1/messages"]
    assert tools_upstream(up, since) == {"Read"}


def test_a_dot_dot_segment_leaves_the_route(served: tuple[Canned, str]) -> None:
    """``/.%2E/`` is ``/../``: this path's canonical form is ``/v1/messages``, the default
    route's Messages path, rewritten by that route's rules (docs/proxy.md, Paths). The
    property drew it as a spelling of the strict route's path, and failed at the deep
    profile."""
    up, url = served
    since = len(up.seen)
    assert status_of(post(url, "/r/.%2E/strict/.%2E/v1/messages")) == 200
    assert [s.path for s in up.seen[since:]] == ["/v1/messages"]
    assert tools_upstream(up, since) == {"Read", "Write", "Edit"}


@pytest.mark.parametrize(
    "path",
    ["/r/strict/v1/messages/", "/r/strict/V1/messages", "/r/strict/v1/messages%2F",
     "/r/strict/v1/messages;x", "/R/strict/v1/messages", "/r/open/v1/Messages",
     "/r/strict/v1/messages/batches", "/r/strict/v1/messages%252F",
     "/r/strict/v1/messages%3Fbeta=true", "/r/strict/v1/messages%23x",
     "/r/strict/v1/messages%253F", "/r/strict/v1/messages.", "/r/strict/v1/messages%2E%20",
     "/r/strict/v1/me%C5%BF%C5%BFages", "/r/strict/v1/MESSAGE%C5%BF"],
)  # fmt: skip
def test_a_near_miss_under_a_route_is_a_404(served: tuple[Canned, str], path: str) -> None:
    up, url = served
    since = len(up.seen)
    answer = post(url, path)
    assert status_of(answer) == 404, answer[:300]
    assert b'"not_found_error"' in answer
    assert len(up.seen) == since


def test_serve_answers_past_a_pipe_of_access_lines(served: tuple[Canned, str]) -> None:
    """The kit's ``serve`` logs to a file. With its stderr a pipe nobody read, 64 KiB of
    access lines (a dozen 8 kB paths here; 200 short ones under the deep profile) left both
    workers blocked writing a line, and the next request hung."""
    _, url = served
    for _ in range(12):
        assert status_of(post(url, "/r/strict/v1/messages/" + "x" * 8000)) == 404
    assert status_of(post(url, "/r/strict/v1/messages")) == 200
