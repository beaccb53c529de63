"""``python benchmarks/bench_capacity.py [--requests N] [--concurrency C]``: requests per
second per core of one ``serve`` worker, for sizing replicas (docs/deploy.md#capacity).

A ``serve`` process (one worker, the default rules) forwards to the canned upstream of
proxy_servers.py; an httpx client sends N small requests, as JSON and then as SSE. The
figure is requests divided by the CPU seconds the serve process itself used
(``/proc/PID/stat`` utime+stime): what one core busy with ``serve`` answers, independent
of the other processes sharing the machine (a wall-clock rate on a shared box is not).
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

HERE = Path(__file__).parent
BIN = Path(sys.executable).parent / "bridge-rules"
SMALL = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "Read hello.txt"}],
    "tools": [{"name": "read", "input_schema": {"type": "object"}}],
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_up(url: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=1, trust_env=False)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise SystemExit(f"{url} did not come up")


async def drive(url: str, body: dict[str, object], requests: int, concurrency: int) -> None:
    limits = httpx.Limits(max_connections=concurrency)
    async with httpx.AsyncClient(limits=limits, trust_env=False, timeout=30) as client:
        queue = iter(range(requests))

        async def one() -> None:
            for _ in queue:
                r = await client.post(url + "/v1/messages", json=body)
                assert r.status_code == 200, r.text

        await asyncio.gather(*(one() for _ in range(concurrency)))


def main(argv: list[str]) -> int:
    requests = int(argv[argv.index("--requests") + 1]) if "--requests" in argv else 3000
    concurrency = int(argv[argv.index("--concurrency") + 1]) if "--concurrency" in argv else 20
    up_port, port = free_port(), free_port()
    up = subprocess.Popen(
        [sys.executable, str(HERE / "proxy_servers.py"), "upstream", str(up_port)]
    )
    serve = subprocess.Popen(  # its access lines (stderr) are written, as in production
        [str(BIN), "serve", "--port", str(port), "--upstream", f"http://127.0.0.1:{up_port}"],
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_up(f"http://127.0.0.1:{up_port}/")
        wait_up(url + "/healthz")
        print("| body | requests | serve CPU s | requests/s per core |")
        print("|---|---|---|---|")
        for name, body in (("small JSON", SMALL), ("small SSE", {**SMALL, "stream": True})):
            asyncio.run(drive(url, body, 200, concurrency))  # warm: pools, caches
            before = cpu_seconds(serve.pid)
            asyncio.run(drive(url, body, requests, concurrency))
            used = cpu_seconds(serve.pid) - before
            print(f"| {name} | {requests} | {used:.2f} | {requests / used:,.0f} |")
    finally:
        serve.terminate()
        up.terminate()
        serve.wait(timeout=30)
        up.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
