"""``python benchmarks/soak.py [--seconds 60] [--clients 200]``: ``serve`` under a mixed load.

200 concurrent clients for 60 s through ``bridge-rules serve`` (default rules) in front of
the canned upstream of bench_proxy, mixing small JSON, small SSE, clients that hang up
mid-stream, upstream 500s and streams the upstream cuts mid-way. It passes when: no 5xx
reached a client except the upstream's own 500s, nothing in serve's stderr is a traceback,
and the worker's RSS grew less than 20 MB from the end of the warm-up (the first quarter)
to the end. Prints one summary line and exits 0 (pass) or 1.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter

import aiohttp
from bench_proxy import HEADERS, HERE, Target, free_port, pi_request, rss_mb, wait_up

KINDS = ("json", "sse", "hangup", "upstream500", "cut")


async def client(url: str, bodies: dict[str, bytes], until: float, seen: Counter[str]) -> None:
    rng = random.Random()
    timeout = aiohttp.ClientTimeout(total=60)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        while time.monotonic() < until:
            kind = rng.choice(KINDS)
            headers = dict(HEADERS)
            if kind in ("upstream500", "cut"):
                headers["x-bench-fault"] = "500" if kind == "upstream500" else "cut"
            body = bodies["json" if kind in ("json", "upstream500") else "sse"]
            try:
                async with session.post(url + "/v1/messages", data=body, headers=headers) as r:
                    if kind == "hangup":
                        await r.content.read(64)
                        r.close()  # the client goes away mid-stream
                        seen["hangup"] += 1
                        continue
                    text = await r.read()
                    expected = 500 if kind == "upstream500" else 200
                    if r.status != expected:
                        seen[f"unexpected {r.status} ({kind})"] += 1
                    elif kind == "cut" and text.count(b"event: error") != 1:
                        seen["cut stream without exactly one error event"] += 1
                    else:
                        seen[kind] += 1
            except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
                seen[f"client error {type(exc).__name__} ({kind})"] += 1


async def soak(target: Target, seconds: float, clients: int) -> tuple[Counter[str], float, float]:
    bodies = {"json": pi_request(6_000, False), "sse": pi_request(6_000, True)}
    seen: Counter[str] = Counter()
    start = time.monotonic()
    until = start + seconds
    tasks = [asyncio.ensure_future(client(target.url, bodies, until, seen)) for _ in range(clients)]
    await asyncio.sleep(seconds / 4)
    warm = max(rss_mb(p) for p in target.worker_pids())
    await asyncio.gather(*tasks)
    end = max(rss_mb(p) for p in target.worker_pids())
    return seen, warm, end


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/soak.py")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--clients", type=int, default=200)
    args = parser.parse_args(argv)
    up_port, px_port = free_port(), free_port()
    py = sys.executable
    upstream = subprocess.Popen(
        [py, str(HERE / "proxy_servers.py"), "upstream", str(up_port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    with tempfile.TemporaryFile() as log:
        serve = subprocess.Popen(
            [py, "-c", "from bridge_rules.cli.app import entry; entry()", "serve",
             "--upstream", f"http://127.0.0.1:{up_port}", "--port", str(px_port)],
            stdout=subprocess.DEVNULL, stderr=log,
        )  # fmt: skip
        target = Target("serve", 1, [], px_port, url=f"http://127.0.0.1:{px_port}", proc=serve)
        try:
            wait_up(f"http://127.0.0.1:{up_port}", upstream)
            wait_up(target.url, serve)
            seen, warm, end = asyncio.run(soak(target, args.seconds, args.clients))
        finally:
            serve.terminate()
            upstream.terminate()
            serve.wait(15)
            upstream.wait(15)
        log.seek(0)
        stderr = log.read().decode("utf-8", "replace")
    tracebacks = stderr.count("Traceback")
    bad = {k: v for k, v in seen.items() if k not in KINDS}
    ok = not bad and tracebacks == 0 and end - warm < 20
    total = sum(seen.values())
    sys.stdout.write(
        f"soak: {total} requests from {args.clients} clients in {args.seconds:g} s "
        f"({', '.join(f'{k} {seen[k]}' for k in KINDS)}); unexpected: {bad or 'none'}; "
        f"tracebacks: {tracebacks}; worker RSS {warm:.0f} MB after warm-up, {end:.0f} MB at "
        f"the end ({end - warm:+.1f} MB): {'PASS' if ok else 'FAIL'}\n"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
