"""Request paths as the proxy matches them: one spelling per resource, and near misses refused.

The proxy rewrites ``POST /v1/messages`` and ``count_tokens`` (the rewritten paths of
the route table, ``proxy.endpoints``) and forwards everything else as sent. A CDN, nginx
or the upstream itself may read a path more loosely than an exact match does:
``//v1/messages``, ``/v1/x/../messages``, ``/v1/messages/``, ``/V1/messages`` or
``/r/strict%2Fv1/messages`` all reach the Messages API somewhere. So:

* :func:`canonical`: the path the server decoded (``%2F`` and ``%2E`` included), with
  repeated slashes collapsed and dot segments removed (RFC 3986 5.2.4). Routes are
  matched on it, and a path whose canonical form is a rewritten path is that path: it is
  rewritten, and forwarded in its canonical spelling.
* :func:`near_miss`: a path that some reader could still take for a Messages path: any
  of its :func:`readings` (decoded again, ``\\`` for ``/``, any case, Unicode's too,
  ``;params``, a decoded ``?`` or ``#`` and what follows it, and a segment's trailing
  blanks and dots dropped, dot segments removed before decoding, after or never) has a
  ``messages`` segment. Under a route or a tool policy it is a 404: such a path would
  carry the client's tools upstream unfiltered. The exact Messages paths are not near
  misses; ``/v1/messages/batches`` is one.
"""

from __future__ import annotations

import re
from urllib.parse import quote, unquote

from bridge_rules.proxy.endpoints import BY_NAME, RESOURCES, REWRITTEN

COUNT_TOKENS = BY_NAME["count_tokens"].path
NO_COUNTING = frozenset({404, 405, 501})
"""An upstream without ``count_tokens`` answers one of these (a 404 page, a 405 for the
method, a 501). Claude Code's gateway protocol makes the endpoint optional: a 404 in the
API's error shape tells the client to estimate the count itself, so every one becomes that."""
NOT_COUNTED = (
    "this upstream does not count tokens (no /v1/messages/count_tokens); estimate the count "
    "locally, as the gateway protocol allows"
)

_SLASHES = re.compile(r"/{2,}")
_PARAMS = re.compile(r";[^/]*")
_QUERY = re.compile(r"[?#].*", re.DOTALL)
"""A ``?`` or ``#`` the path held encoded (``%3F``, ``%23``): a reader that decodes the
path and parses it again (a proxy passing on the decoded URI) ends the path there."""
_TRAILING = re.compile(r"[.\s\0]+(?=/|$)")
"""A segment's trailing blanks and dots, which Windows servers (IIS, HTTP.sys) drop."""
_RESOURCE = "|".join(map(re.escape, sorted(RESOURCES)))
_FAMILY = re.compile(rf"(^|/)(?:{_RESOURCE})(/|$)")


def canonical(path: str) -> str:
    """``path`` (already percent-decoded) with ``//`` collapsed and dot segments removed;
    always starts with ``/``."""
    out: list[str] = []
    segments = _SLASHES.sub("/", path).split("/")
    for segment in segments[1:]:
        if segment == "..":
            if out:
                out.pop()
        elif segment != ".":
            out.append(segment)
    trailing = segments[-1] in (".", "..") and bool(out)
    return "/" + "/".join(out) + ("/" if trailing else "")


def readings(path: str) -> set[str]:
    """What readers might make of ``path``: decoded until it stops changing, ``\\`` as
    ``/``, in one case (Unicode's: ``ſ`` upper-cases to ``S``, as .NET's case-insensitive
    routing compares), ``;params``, a decoded ``?`` or ``#`` and what follows, and each
    segment's trailing blanks and dots dropped; with dot segments removed after decoding,
    before it, or not at all."""

    def decoded(text: str) -> str:
        for _ in range(4):
            once = unquote(text)
            if once == text:
                break
            text = once
        text = _QUERY.sub("", text.replace("\\", "/"))
        return _PARAMS.sub("", text.upper().lower())

    plain = decoded(path)
    found = {canonical(plain), _SLASHES.sub("/", plain), decoded(canonical(path))}
    return {_TRAILING.sub("", r) for r in found}


def near_miss(path: str, raw: str | None = None) -> bool:
    """Whether some reader could take ``path`` (as decoded; ``raw``: as written) for a
    Messages path that it does not spell exactly: a ``messages`` segment anywhere."""
    if canonical(path) in REWRITTEN:
        return False
    spelled = (path,) if raw is None else (path, raw)
    return any(_FAMILY.search(r) for p in spelled for r in readings(p))


def raw(path: str) -> bytes:
    """``path`` percent-encoded again, for the upstream (``raw_path``)."""
    return quote(path, safe="/:@!$&'()*+,;=-._~").encode("ascii")
