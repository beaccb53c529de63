"""What the path tests share (``hostile/test_path_spellings``, ``proxy/test_endpoints``):
a real ``serve`` with a read-only route and a default one, a raw request with a body of
three tools, the tool names an upstream request carried, and one character's spellings.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from hypothesis import strategies as st
from tests.hostile.http_kit import READ_CALL, exchange
from tests.proxy.canned import Canned

BODY = json.dumps({
    "model": "claude-sonnet-4-5", "max_tokens": 5,
    "messages": [{"role": "user", "content": "hi"}],
    "tools": [{"name": n, "input_schema": {"type": "object"}} for n in ("read", "write", "edit")],
}).encode()  # fmt: skip
ROUTES = ("strict", "open")


@contextmanager
def two_routes(folder: Path) -> Iterator[tuple[Canned, str]]:
    """``serve`` (two workers) with the routes ``strict`` (read-only) and ``open`` (the
    default) over one loopback upstream that answers with a ``Read`` call."""
    from serve_process import serving  # tests/e2e, on the path once http_kit is imported

    with Canned() as up:
        up.reply.body = [READ_CALL]
        settings_file = folder / "serve.yaml"
        settings_file.write_text(
            "workers: 2\nroutes:\n"
            f"  - {{name: strict, upstream: '{up.url}', policy: [read_only]}}\n"
            f"  - {{name: open, upstream: '{up.url}', default: true}}\n",
            encoding="utf-8",
        )
        with serving("--config", str(settings_file)) as url:
            yield up, url


def send(url: str, method: str, path: str) -> bytes:
    """``method path`` with :data:`BODY`, as raw bytes: the path goes out as written."""
    head = (
        f"{method} {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        f"content-length: {len(BODY)}\r\nconnection: close\r\n\r\n"
    )
    return exchange(url, head.encode() + BODY)


def tools_in(body: bytes) -> set[str]:
    """The tool names a request body carried upstream (none when it is not JSON)."""
    try:
        sent = json.loads(body)
    except ValueError:
        return set()
    return {t.get("name") for t in sent.get("tools") or () if isinstance(t, dict)}


FOLDS = {"s": "\u017f", "i": "\u0131", "k": "\u212a"}
"""Letters whose Unicode upper case is an ASCII letter's (``ſ`` -> ``S``, dotless ``ı`` ->
``I``; the Kelvin sign lower-cases to ``k``): a reader comparing without case (.NET's
routing upper-cases) takes them for that letter."""


@st.composite
def char(draw: st.DrawFn, c: str, hows: Sequence[str]) -> str:
    """One character as written: itself, another case (``fold``: a Unicode letter of the
    same upper case, as UTF-8 percent-encoded), or percent-encoded (either hex, or the
    ``%`` itself encoded again), drawn from ``hows``."""
    how = draw(st.sampled_from(hows))
    if how == "case":
        return c.swapcase()
    if how == "fold":
        return quote(FOLDS.get(c.lower(), c))
    if how in ("pct", "pct-lower"):
        code = f"%{ord(c):02X}"
        return code.lower() if how == "pct-lower" else code
    if how == "double":
        return f"%25{ord(c):02X}"
    return c
