"""The servers bench_proxy.py measures against, each run as its own process.

* ``upstream``: a canned Anthropic Messages endpoint (uvicorn, like the proxy): it
  reads the whole body and answers a fixed message, as JSON or SSE as asked (the SSE
  with ``json.dumps``' spaces, or compact when the request's ``metadata.user_id`` is
  ``bench-compact-sse``).
* ``bare``: a forwarder on the proxy's own stack (uvicorn + httptools + uvloop, and
  an aiohttp client, or httpcore with ``--client httpcore``) that does nothing but
  move bytes: the floor any proxy on this stack pays.

``python benchmarks/proxy_servers.py upstream PORT`` /
``python benchmarks/proxy_servers.py bare PORT UPSTREAM_URL [--workers N] [--client C]``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import uvicorn

OPTIONS: dict[str, Any] = {
    "access_log": False,
    "server_header": False,
    "date_header": False,
    "proxy_headers": False,
    "log_level": "warning",
}
HOP = frozenset({b"host", b"content-length", b"connection", b"transfer-encoding", b"keep-alive"})

MESSAGE = {
    "id": "msg_bench", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
    "content": [{"type": "text", "text": "Reading it."},
                {"type": "tool_use", "id": "toolu_b", "name": "Read",
                 "input": {"file_path": "hello.txt"}}],
    "stop_reason": "tool_use", "stop_sequence": None,
    "usage": {"input_tokens": 10, "output_tokens": 5},
}  # fmt: skip


def sse_body(separators: tuple[str, str] = (", ", ": ")) -> bytes:
    """The message as a stream: with ``json.dumps``' spaces, as gateways that re-serialise
    in Python write it, or compact (``(",", ":")``), as the Anthropic API writes it."""
    start = {**MESSAGE, "content": [], "stop_reason": None}
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"message": start}),
        ("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": "Reading"}}),
        ("content_block_stop", {"index": 0}),
        ("content_block_start", {"index": 1, "content_block": {
            "type": "tool_use", "id": "toolu_b", "name": "Read", "input": {}}}),
        ("content_block_delta", {"index": 1, "delta": {
            "type": "input_json_delta", "partial_json": '{"file_path": '}}),
        ("content_block_delta", {"index": 1, "delta": {
            "type": "input_json_delta", "partial_json": '"hello.txt"}'}}),
        ("content_block_stop", {"index": 1}),
        ("message_delta", {"delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 5}}),
        ("message_stop", {}),
    ]  # fmt: skip
    return b"".join(
        f"event: {n}\ndata: {json.dumps({'type': n, **d}, separators=separators)}\n\n".encode()
        for n, d in events
    )


JSON_BODY = json.dumps(MESSAGE).encode()
SSE_BODY = sse_body()
SSE_COMPACT = sse_body((",", ":"))
COMPACT_MARK = b"bench-compact-sse"
"""In a request's ``metadata.user_id``: answer with the compact stream."""


async def _read(receive: Any) -> bytes:
    chunks = []
    more = True
    while more:
        msg = await receive()
        chunks.append(msg.get("body", b""))
        more = msg.get("more_body", False)
    return b"".join(chunks)


async def upstream_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    body = await _read(receive)
    fault = dict(scope["headers"]).get(b"x-bench-fault")
    if fault == b"500":  # the upstream's own error, to be passed through untouched
        error = b'{"type":"error","error":{"type":"api_error","message":"bench fault"}}'
        await send(
            {
                "type": "http.response.start",
                "status": 500,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", b"%d" % len(error)),
                ],
            }
        )
        await send({"type": "http.response.body", "body": error})
        return
    stream = b'"stream":true' in body[:200].replace(b" ", b"")
    if fault == b"cut" and stream:  # half the stream, then the connection drops
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/event-stream")],
            }
        )
        await send(
            {
                "type": "http.response.body",
                "body": SSE_BODY[: len(SSE_BODY) // 2],
                "more_body": True,
            }
        )
        raise ConnectionAbortedError("bench fault: cut mid-stream")
    if stream:
        data = SSE_COMPACT if COMPACT_MARK in body else SSE_BODY
        ctype = b"text/event-stream"
    else:
        data, ctype = JSON_BODY, b"application/json"
    headers = [(b"content-type", ctype), (b"content-length", str(len(data)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": data})


def aiohttp_forwarder() -> Any:
    import aiohttp

    base = os.environ["BENCH_UPSTREAM"]
    state: dict[str, aiohttp.ClientSession] = {}

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        if "s" not in state:
            state["s"] = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0),
                cookie_jar=aiohttp.DummyCookieJar(),
                auto_decompress=False,
                skip_auto_headers=("User-Agent", "Accept", "Accept-Encoding", "Content-Type"),
            )
        body = await _read(receive)
        headers = [(k.decode(), v.decode()) for k, v in scope["headers"] if k not in HOP]
        async with state["s"].request(
            scope["method"], base + scope["path"], headers=headers, data=body or None
        ) as r:
            out = [(k, v) for k, v in r.raw_headers if k.lower() not in HOP]
            await send({"type": "http.response.start", "status": r.status, "headers": out})
            async for chunk in r.content.iter_any():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    return app


def httpcore_forwarder() -> Any:
    import httpcore

    base = os.environ["BENCH_UPSTREAM"]
    pool = httpcore.AsyncConnectionPool(max_connections=1000, max_keepalive_connections=1000)

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = await _read(receive)
        headers = [(k, v) for k, v in scope["headers"] if k not in HOP]
        headers.append((b"content-length", str(len(body)).encode()))
        url = (base + scope["path"]).encode()
        async with pool.stream(scope["method"].encode(), url, headers=headers, content=body) as r:
            out = [(k, v) for k, v in r.headers if k.lower() not in HOP]
            await send({"type": "http.response.start", "status": r.status, "headers": out})
            async for chunk in r.aiter_stream():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    return app


def bare_app() -> Any:
    """uvicorn factory for the bare forwarder (settings in the environment)."""
    if os.environ.get("BENCH_CLIENT") == "httpcore":
        return httpcore_forwarder()
    return aiohttp_forwarder()


def main(argv: list[str]) -> int:
    kind, port = argv[0], int(argv[1])
    if kind == "upstream":
        # Keep-alive longer than any pause between cells: with uvicorn's 5 s, a forwarder
        # could pick a pooled connection the upstream was just closing (a failed request).
        uvicorn.run(
            upstream_app,
            host="127.0.0.1",
            port=port,
            lifespan="off",
            timeout_keep_alive=120,
            **OPTIONS,
        )
        return 0
    os.environ["BENCH_UPSTREAM"] = argv[2].rstrip("/")
    workers = int(argv[argv.index("--workers") + 1]) if "--workers" in argv else 1
    if "--client" in argv:
        os.environ["BENCH_CLIENT"] = argv[argv.index("--client") + 1]
    uvicorn.run(
        "proxy_servers:bare_app",
        factory=True,
        app_dir=str(Path(__file__).parent),
        host="127.0.0.1",
        port=port,
        workers=workers,
        lifespan="off",
        **OPTIONS,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
