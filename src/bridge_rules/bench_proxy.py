"""``python -m bridge_rules.bench_proxy``: the proxy's added latency, measured in one run.

A canned upstream (uvicorn, its own process) answers every request the same
way; the proxy (``bridge-rules serve``, its own process, default rules) sits in
front of it. One client alternates direct and proxied calls, so both see the
same machine state; the figure that matters is the difference of medians.
Then 50 concurrent clients go through the proxy and every error is counted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

MESSAGE = {
    "id": "msg_bench", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
    "content": [{"type": "text", "text": "Reading it."},
                {"type": "tool_use", "id": "toolu_b", "name": "Read_ide",
                 "input": {"file_path": "hello.txt"}}],
    "stop_reason": "tool_use", "stop_sequence": None,
    "usage": {"input_tokens": 10, "output_tokens": 5},
}  # fmt: skip


def _sse() -> bytes:
    start = {**MESSAGE, "content": [], "stop_reason": None}
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"message": start}),
        ("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": "Reading"}}),
        ("content_block_stop", {"index": 0}),
        ("content_block_start", {"index": 1, "content_block": {
            "type": "tool_use", "id": "toolu_b", "name": "Read_ide", "input": {}}}),
        ("content_block_delta", {"index": 1, "delta": {
            "type": "input_json_delta", "partial_json": '{"file_path": '}}),
        ("content_block_delta", {"index": 1, "delta": {
            "type": "input_json_delta", "partial_json": '"hello.txt"}'}}),
        ("content_block_stop", {"index": 1}),
        ("message_delta", {"delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 5}}),
        ("message_stop", {}),
    ]  # fmt: skip
    return b"".join(
        f"event: {n}\ndata: {json.dumps({'type': n, **d})}\n\n".encode() for n, d in events
    )


async def upstream_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """The canned upstream: reads the whole body, answers JSON or SSE as asked."""
    if scope["type"] != "http":
        return
    body = b""
    more = True
    while more:
        msg = await receive()
        body += msg.get("body", b"")
        more = msg.get("more_body", False)
    stream = b'"stream":true' in body.replace(b" ", b"")
    data = _sse() if stream else json.dumps(MESSAGE).encode()
    ctype = b"text/event-stream" if stream else b"application/json"
    headers = [(b"content-type", ctype), (b"content-length", str(len(data)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": data})


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(url: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.05)
    raise RuntimeError(f"{url} did not come up")


@contextmanager
def _process(args: list[str], url: str) -> Iterator[None]:
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait(url)
        yield
    finally:
        proc.terminate()
        proc.wait(10)


def _request(size: int, stream: bool) -> bytes:
    """A pi-shaped request (its four default tools) padded with history to ``size`` bytes."""
    tools = [
        {"name": n, "description": f"The {n} tool.",
         "input_schema": {"type": "object", "properties": {"path": {"type": "string"}},
                          "required": ["path"]}}
        for n in ("read", "bash", "edit", "write")
    ]  # fmt: skip
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Read hello.txt"}]
    payload = {"model": "claude-sonnet-4-5", "max_tokens": 32000, "stream": stream,
               "system": "You are pi.", "tools": tools, "messages": messages}  # fmt: skip
    turn = 0
    while len(json.dumps(payload)) < size:
        turn += 1
        messages.append(
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": f"t{turn}",
                        "name": "read",
                        "input": {"path": "a.txt"},
                    }
                ],
            }
        )
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": f"t{turn}", "content": "x" * 2000}
                ],
            }
        )
    messages.append({"role": "user", "content": "go on"})
    return json.dumps(payload).encode()


def _time(client: httpx.Client, url: str, body: bytes) -> float:
    start = time.perf_counter()
    r = client.post(url + "/v1/messages", content=body, headers={"x-api-key": "bench"})
    r.read()
    elapsed = time.perf_counter() - start
    if r.status_code != 200:
        raise RuntimeError(f"{url}: status {r.status_code}: {r.text[:200]}")
    return elapsed


def latency(direct: str, proxied: str, body: bytes, n: int) -> dict[str, float]:
    times: dict[str, list[float]] = {"direct": [], "proxied": []}
    with httpx.Client(timeout=60) as client:
        for _ in range(max(5, n // 10)):  # warm connections and caches
            _time(client, direct, body)
            _time(client, proxied, body)
        for _ in range(n):
            times["direct"].append(_time(client, direct, body))
            times["proxied"].append(_time(client, proxied, body))
    d, p = statistics.median(times["direct"]), statistics.median(times["proxied"])
    return {"direct_ms": d * 1e3, "proxied_ms": p * 1e3, "added_ms": (p - d) * 1e3}


async def concurrent(proxied: str, body: bytes, clients: int, each: int) -> dict[str, float]:
    errors = 0
    limits = httpx.Limits(max_connections=clients)

    async def one(client: httpx.AsyncClient) -> None:
        nonlocal errors
        for _ in range(each):
            try:
                r = await client.post(proxied + "/v1/messages", content=body)
                if r.status_code != 200 or not r.content:
                    errors += 1
            except httpx.HTTPError:
                errors += 1

    start = time.perf_counter()
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:
        await asyncio.gather(*(one(client) for _ in range(clients)))
    wall = time.perf_counter() - start
    return {"requests": clients * each, "errors": errors, "req_per_s": clients * each / wall}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bridge_rules.bench_proxy")
    parser.add_argument("-n", type=int, default=300, help="timed requests per small case")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--upstream-server", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.upstream_server:
        import uvicorn

        uvicorn.run(upstream_app, host="127.0.0.1", port=args.upstream_server,
                    log_level="warning", access_log=False, lifespan="off")  # fmt: skip
        return 0
    up_port, proxy_port = _free_port(), _free_port()
    direct, proxied = f"http://127.0.0.1:{up_port}", f"http://127.0.0.1:{proxy_port}"
    py = sys.executable
    serve = [py, "-c", "from bridge_rules.cli.app import entry; entry()", "serve",
             "--upstream", direct, "--port", str(proxy_port)]  # fmt: skip
    results: dict[str, Any] = {"cpus": os.cpu_count()}
    with (
        _process([py, "-m", "bridge_rules.bench_proxy", "--upstream-server", str(up_port)],
                 direct),
        _process(serve, proxied + "/healthz"),
    ):  # fmt: skip
        for label, size, n in (("small", 6_000, args.n), ("1MB", 1_000_000, max(20, args.n // 10))):
            for stream in (False, True):
                body = _request(size, stream)
                key = f"{label} {'stream' if stream else 'json'} ({len(body)} B)"
                results[key] = latency(direct, proxied, body, n)
        results["50 concurrent clients (small, json)"] = asyncio.run(
            concurrent(proxied, _request(6_000, False), 50, 20)
        )
    if args.json:
        sys.stdout.write(json.dumps(results, indent=2) + "\n")
        return 0
    for key, value in results.items():
        if key == "cpus":
            sys.stdout.write(f"machine: {value} CPUs\n")
        elif "added_ms" in value:
            sys.stdout.write(
                f"{key:34} direct {value['direct_ms']:7.3f} ms  proxied {value['proxied_ms']:7.3f}"
                f" ms  added {value['added_ms']:+7.3f} ms (medians)\n"
            )
        else:
            sys.stdout.write(
                f"{key:34} {value['requests']} requests, {value['errors']} errors, "
                f"{value['req_per_s']:.0f} req/s\n"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
