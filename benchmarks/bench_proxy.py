"""``python benchmarks/bench_proxy.py [--quick]``: the proxy against its floors, in one run.

Every server runs as its own process, all started at once and measured in turn
within each round, so they share the machine's state: a canned upstream (also
called directly), ``bridge-rules serve`` with the default rules, ``serve`` with
rules that change nothing, ``serve --config`` with two routes (requests taking a route
whose rules are the default ones plus the ``read_only`` policy switch), ``serve`` with the
default rules sent ``x-bridge-rules-policy: read_only`` on every request, and a bare
forwarder on the same stack (uvicorn + aiohttp; one on httpcore too, the client the
proxy did not choose). Workloads:
small JSON, small SSE (the upstream's events with json.dumps' spaces, and compact), a
1 MB JSON body sent again and again in a form the message cache never stores (the cold
path), and the same 1 MB history sent as an agent sends it, turn after turn (compact
JSON, a new last message each time),
sequentially (added p50 latency) and at 50 and 200 concurrent clients
(throughput, CPU per request, worker RSS), with 1 and 2 workers. Each figure is
the median over rounds with its spread (min-max), and targets are judged on
ratios taken within a round. Nothing here asserts timings: it prints the targets
table (see benchmarks/README.md).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

HERE = Path(__file__).resolve().parent
NOOP_RULES = """bridge-rules: 1
name: noop
description: The gate opens for Claude models; no rule changes anything.
gate:
  api: anthropic-messages
  model: "(?i)claude"
names: []
"""
ROUTES_CONFIG = """# two routes: requests take /r/pi/ (a route with the read_only switch on)
upstream: {upstream}
routes:
  - {{name: pi, rules: [default], policy: [read_only], default: true}}
  - {{name: other, rules: [default]}}
"""
CLK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


# ------------------------------------------------------------------ workloads
def pi_request(size: int, stream: bool, user: str = "") -> bytes:
    """A pi-shaped request (its four default tools) padded with history to ``size`` bytes;
    with ``metadata.user_id`` when ``user`` is given."""
    tools = [
        {"name": n, "description": f"The {n} tool.",
         "input_schema": {"type": "object", "properties": {"path": {"type": "string"}},
                          "required": ["path"]}}
        for n in ("read", "bash", "edit", "write")
    ]  # fmt: skip
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Read hello.txt"}]
    payload = {"model": "claude-sonnet-4-5", "max_tokens": 32000, "stream": stream,
               "system": "You are pi.", "tools": tools, "messages": messages}  # fmt: skip
    if user:
        payload["metadata"] = {"user_id": user}
    turn = 0
    while len(json.dumps(payload)) < size:
        turn += 1
        call = {"type": "tool_use", "id": f"t{turn}", "name": "read", "input": {"path": "a.txt"}}
        result = {"type": "tool_result", "tool_use_id": f"t{turn}", "content": "x" * 2000}
        messages.append({"role": "assistant", "content": [call]})
        messages.append({"role": "user", "content": [result]})
    messages.append({"role": "user", "content": "go on"})
    return json.dumps(payload).encode()


Body = Callable[[], bytes]
"""A workload: the body of its next request."""


def same(body: bytes) -> Body:
    return lambda: body


def compact(body: bytes) -> bytes:
    """``body`` as an agent writes it: compact JSON, as ``JSON.stringify`` does."""
    return json.dumps(json.loads(body), separators=(",", ":"), ensure_ascii=False).encode()


def agent_turns(size: int) -> Body:
    """What an agent sends turn after turn: compact JSON, the history its earlier requests
    sent, and a last message no request sent before."""
    head, _, tail = compact(pi_request(size, False)).rpartition(b'"go on"')
    turns = itertools.count()
    return lambda: b'%s"go on, turn %d"%s' % (head, next(turns), tail)


WORKLOADS: dict[str, Callable[[], Body]] = {
    # One pi turn, as pi writes it (compact).
    "small JSON": lambda: same(compact(pi_request(6_000, False))),
    # The upstream's stream with json.dumps' spaces (as a gateway re-serialising in Python
    # writes it; the row runs before this one measured), then compact as the API writes it.
    "small SSE": lambda: same(compact(pi_request(6_000, True))),
    "small SSE compact": lambda: same(compact(pi_request(6_000, True, "bench-compact-sse"))),
    # Every request the same, written with json.dumps's spaces, which the message cache
    # never stores: the cold path, every message parsed, rewritten and serialised.
    "1 MB JSON": lambda: same(pi_request(1_000_000, False)),
    # The same history as an agent sends it: the cache serves all but the new message.
    "1 MB agent": lambda: agent_turns(1_000_000),
}
CPU_TARGETS = (
    ("small JSON", 1.5),
    ("small SSE", 1.5),
    ("small SSE compact", 1.5),
    ("1 MB JSON", 1.2),
)
"""Issue 36: server CPU per request at 50 clients, at most this many times the bare
forwarder's on the same stack."""
POLICY_HEADER = "x-bridge-rules-policy"
HEADERS = {
    "x-api-key": "bench",
    "anthropic-version": "2023-06-01",
    "content-type": "application/json",
}


# ------------------------------------------------------------------ processes
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Target:
    name: str
    workers: int
    argv: list[str]
    port: int
    url: str = ""
    proc: subprocess.Popen[bytes] | None = None
    prefix: str = ""
    """Where its requests go under ``url``: a route's ``/r/<route>``."""
    headers: dict[str, str] = field(default_factory=lambda: HEADERS)
    """What its requests carry: the API headers, and for one target a policy switch."""

    @property
    def api(self) -> str:
        return self.url + self.prefix

    def pids(self) -> list[int]:
        """The server process and every descendant."""
        if self.proc is None:
            return []
        out, todo = [], [self.proc.pid]
        while todo:
            pid = todo.pop()
            out.append(pid)
            for task in Path(f"/proc/{pid}/task").glob("*/children"):
                todo += [int(c) for c in task.read_text().split()]
        return out

    def worker_pids(self) -> list[int]:
        pids = self.pids()
        return pids[:1] if self.workers == 1 else pids[1:]


def cpu_seconds(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / CLK


def rss_mb(pid: int) -> float:
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE / 2**20
    except OSError:
        return 0.0


def wait_up(url: str, proc: subprocess.Popen[bytes] | None) -> None:
    import urllib.request

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{url}: server exited with {proc.returncode}")
        try:
            urllib.request.urlopen(url + "/healthz", timeout=2).read()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not come up")


@contextmanager
def started(target: Target) -> Iterator[Target]:
    target.url = f"http://127.0.0.1:{target.port}"
    with tempfile.TemporaryFile() as log:  # the server's stderr, shown if it dies
        target.proc = subprocess.Popen(target.argv, stdout=subprocess.DEVNULL, stderr=log, cwd=HERE)
        try:
            yield target
        except RuntimeError:
            log.seek(0)
            sys.stderr.write(log.read().decode("utf-8", "replace")[-3000:])
            raise
        finally:
            target.proc.terminate()
            try:
                target.proc.wait(15)
            except subprocess.TimeoutExpired:
                target.proc.kill()


def targets(upstream: str, noop: Path, routes: Path, httpcore: bool) -> list[Target]:
    py = sys.executable
    entry = "from bridge_rules.cli.app import entry; entry()"

    def serve(workers: int, *rules: str) -> Callable[[int], list[str]]:
        return lambda port: [py, "-c", entry, "serve", "--upstream", upstream, "--port",
                             str(port), "--workers", str(workers), *rules]  # fmt: skip

    def bare(workers: int, client: str) -> Callable[[int], list[str]]:
        return lambda port: [py, str(HERE / "proxy_servers.py"), "bare", str(port), upstream,
                             "--workers", str(workers), "--client", client]  # fmt: skip

    specs: list[tuple[str, int, Callable[[int], list[str]]]] = [
        ("serve default", 1, serve(1)),
        ("serve no-op", 1, serve(1, "--rules", str(noop))),
        ("serve routed", 1, serve(1, "--config", str(routes))),
        ("serve + header", 1, serve(1)),
        ("bare aiohttp", 1, bare(1, "aiohttp")),
        ("serve default x2", 2, serve(2)),
        ("bare aiohttp x2", 2, bare(2, "aiohttp")),
    ]
    if httpcore:
        specs.append(("bare httpcore", 1, bare(1, "httpcore")))
    out = []
    for name, workers, argv in specs:
        port = free_port()
        prefix = "/r/pi" if name == "serve routed" else ""
        headers = {**HEADERS, POLICY_HEADER: "read_only"} if name == "serve + header" else HEADERS
        out.append(Target(name, workers, argv(port), port, prefix=prefix, headers=headers))
    return out


# ------------------------------------------------------------------ measuring
async def one(session: aiohttp.ClientSession, target: Target, body: Body) -> bool:
    url, headers = target.api, target.headers
    async with session.post(url + "/v1/messages", data=body(), headers=headers) as r:
        data = await r.read()
        return r.status == 200 and bool(data)


async def latency(all_targets: list[Target], body: Body, n: int) -> dict[str, float]:
    """p50 of each target, requests interleaved target by target."""
    times: dict[str, list[float]] = {t.name: [] for t in all_targets}
    sessions = {t.name: aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=1))
                for t in all_targets}  # fmt: skip
    try:
        for i in range(n + max(3, n // 10)):
            for t in all_targets:
                start = time.perf_counter()
                if not await one(sessions[t.name], t, body):
                    raise RuntimeError(f"{t.name}: a request failed")
                if i >= max(3, n // 10):  # the first ones warm connections and caches
                    times[t.name].append(time.perf_counter() - start)
    finally:
        for s in sessions.values():
            await s.close()
    return {name: statistics.median(v) * 1e3 for name, v in times.items()}


async def load(target: Target, body: Body, clients: int, seconds: float) -> dict[str, float]:
    """Throughput, errors, server CPU per request and worker RSS with ``clients`` looping."""
    done = errors = 0
    counting = False
    stop = False
    rss: list[float] = []

    async def client(session: aiohttp.ClientSession) -> None:
        nonlocal done, errors
        while not stop:
            try:
                ok = await one(session, target, body)
            except (aiohttp.ClientError, asyncio.TimeoutError):
                ok = False
            if counting:
                done += ok
                errors += not ok

    timeout = aiohttp.ClientTimeout(total=120)
    connector = aiohttp.TCPConnector(limit=clients)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        tasks = [asyncio.ensure_future(client(session)) for _ in range(clients)]
        await asyncio.sleep(min(1.0, seconds / 3))  # connections up, caches warm
        pids = target.pids()
        cpu0, start, counting = cpu_seconds(pids), time.perf_counter(), True
        while time.perf_counter() - start < seconds:
            await asyncio.sleep(0.2)
            rss.append(max((rss_mb(p) for p in target.worker_pids()), default=0.0))
        counting, wall, cpu = False, time.perf_counter() - start, cpu_seconds(pids) - cpu0
        stop = True
        await asyncio.gather(*tasks)
    return {
        "req_s": done / wall,
        "errors": errors,
        "cpu_ms": cpu * 1e3 / done if done and pids else 0.0,
        "rss_mb": max(rss, default=0.0),
    }


async def one_round(
    all_targets: list[Target], bodies: dict[str, Body], n: int, seconds: float
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for workload, body in bodies.items():
        large = len(body()) >= 100_000
        reps = max(10, n // 8) if large else n
        p50 = await latency(all_targets, body, reps)
        cell: dict[str, Any] = {"p50_ms": p50, "added_ms": {}}
        for t in all_targets[1:]:
            cell["added_ms"][t.name] = p50[t.name] - p50[all_targets[0].name]
        # A 1 MB request takes long enough that 200 of them need a longer window.
        span = seconds * 3 if large else seconds
        for clients in (50, 200):
            cell[f"c{clients}"] = {t.name: await load(t, body, clients, span) for t in all_targets}
        out[workload] = cell
    return out


# ------------------------------------------------------------------ reporting
@dataclass
class Stat:
    values: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    def show(self, fmt: str = "{:.2f}") -> str:
        if len(self.values) == 1:
            return fmt.format(self.values[0])
        spread = f"{fmt.format(min(self.values))}-{fmt.format(max(self.values))}"
        return f"{fmt.format(self.median)} [{spread}]"


def collect(rounds: list[dict[str, Any]], get: Callable[[dict[str, Any]], float]) -> Stat:
    return Stat([get(r) for r in rounds])


def figures(rounds: list[dict[str, Any]], names: list[str], out: list[str]) -> None:
    w = 24
    out.append("Added p50 latency, sequential (ms over calling the upstream directly):")
    out.append(f"  {'':18}" + "".join(f"{n:>{w}}" for n in names[1:]))
    for wl in rounds[0]:
        cells = [collect(rounds, lambda r, wl=wl, n=n: r[wl]["added_ms"][n]).show()
                 for n in names[1:]]  # fmt: skip
        out.append(f"  {wl:18}" + "".join(f"{c:>{w}}" for c in cells))
    for metric, label, fmt in (
        ("req_s", "Throughput (requests/s)", "{:.0f}"),
        ("cpu_ms", "Server CPU per request (ms)", "{:.2f}"),
        ("rss_mb", "Largest worker RSS (MB)", "{:.0f}"),
    ):
        out.append(f"{label}:")
        out.append(f"  {'':24}" + "".join(f"{n:>{w}}" for n in names))
        for wl in rounds[0]:
            for c in ("c50", "c200"):
                cells = [
                    collect(rounds, lambda r, wl=wl, c=c, n=n, m=metric: r[wl][c][n][m]).show(fmt)
                    for n in names
                ]
                out.append(f"  {wl + ' ' + c:24}" + "".join(f"{x:>{w}}" for x in cells))
    errors = sum(r[wl][c][n]["errors"] for r in rounds for wl in r for c in ("c50", "c200")
                 for n in names)  # fmt: skip
    out.append(f"Errors under load: {errors}")


def verdicts(rounds: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """(target, measured, status) rows; each ratio is taken within a round."""
    rows: list[tuple[str, str, str]] = []

    def row(label: str, stat: Stat, ok: Callable[[float], bool], fmt: str = "{:.2f}x") -> None:
        rows.append((label, stat.show(fmt), "met" if ok(stat.median) else "MISSED"))

    serve, bare, routed = "serve default", "bare aiohttp", "serve routed"
    header, r0 = "serve + header", rounds[0]
    for wl in rounds[0]:
        if routed not in rounds[0][wl]["c50"]:  # a report of a run from before routes
            continue
        for c in ("c50", "c200"):
            row(f"routes + policy CPU/request <= 1.05x one route ({wl}, {c})",
                collect(rounds, lambda r, wl=wl, c=c: r[wl][c][routed]["cpu_ms"]
                        / max(r[wl][c][serve]["cpu_ms"], 1e-9)),
                lambda v: v <= 1.05)  # fmt: skip
            if header in r0[wl][c]:
                row(f"policy header CPU/request <= 1.05x without ({wl}, {c})",
                    collect(rounds, lambda r, wl=wl, c=c: r[wl][c][header]["cpu_ms"]
                            / max(r[wl][c][serve]["cpu_ms"], 1e-9)),
                    lambda v: v <= 1.05)  # fmt: skip
    for wl in rounds[0]:
        row(f"added p50 <= 1.3x bare forwarder's ({wl})",
            collect(rounds, lambda r, wl=wl: r[wl]["added_ms"][serve]
                    / max(r[wl]["added_ms"][bare], 1e-3)),
            lambda v: v <= 1.3)  # fmt: skip
    for wl in rounds[0]:
        for c in ("c50", "c200"):
            row(f"throughput >= 0.8x bare forwarder's ({wl}, {c})",
                collect(rounds, lambda r, wl=wl, c=c: r[wl][c][serve]["req_s"]
                        / max(r[wl][c][bare]["req_s"], 1e-9)),
                lambda v: v >= 0.8)  # fmt: skip

    for wl, most in CPU_TARGETS:  # issue 36: CPU per request against the bare forwarder
        if wl not in r0:
            continue
        row(f"server CPU <= {most}x bare forwarder's ({wl}, c50)",
            collect(rounds, lambda r, wl=wl: r[wl]["c50"][serve]["cpu_ms"]
                    / max(r[wl]["c50"][bare]["cpu_ms"], 1e-9)),
            lambda v, most=most: v <= most)  # fmt: skip

    def two_workers(name: str, c: str) -> Stat:
        """``name`` with two workers over one, small JSON at ``c`` clients."""
        return collect(rounds, lambda r: r["small JSON"][c][name + " x2"]["req_s"]
                       / max(r["small JSON"][c][name]["req_s"], 1e-9))  # fmt: skip

    for c in ("c50", "c200"):
        row(f"--workers 2 >= 1.6x one worker (small JSON, {c})", two_workers(serve, c),
            lambda v: v >= 1.6)  # fmt: skip
    for c in ("c50", "c200"):  # whether this machine can show the target at all
        rows.append((f"(control) bare --workers 2 / one worker (small JSON, {c})",
                     two_workers(bare, c).show("{:.2f}x"), "info"))  # fmt: skip
    for wl in rounds[0]:
        row(f"RSS <= 100 MB per worker at c200 ({wl})",
            collect(rounds, lambda r, wl=wl: max(r[wl]["c200"][n]["rss_mb"]
                                                 for n in (serve, serve + " x2"))),
            lambda v: v <= 100, "{:.0f} MB")  # fmt: skip
    return rows


# ------------------------------------------------------------------ main
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/bench_proxy.py")
    parser.add_argument("--quick", action="store_true", help="2 short rounds (~3 min)")
    parser.add_argument("--rounds", type=int, help="rounds (default 3; --quick 2)")
    parser.add_argument("-n", type=int, help="sequential requests per small case")
    parser.add_argument("--seconds", type=float, help="seconds of load per cell")
    parser.add_argument("--no-httpcore", action="store_true", help="skip the httpcore forwarder")
    parser.add_argument("--json", metavar="FILE", help="also write every figure to FILE")
    args = parser.parse_args(argv)
    rounds_n = args.rounds or (2 if args.quick else 3)
    n = args.n or (60 if args.quick else 200)
    seconds = args.seconds or (1.5 if args.quick else 3.0)
    bodies = {name: make() for name, make in WORKLOADS.items()}
    noop = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench-noop-{os.getpid()}.yaml"
    noop.write_text(NOOP_RULES)
    routes = noop.with_name(f"bench-routes-{os.getpid()}.yaml")
    load_before = os.getloadavg()
    up_port = free_port()
    up_argv = [sys.executable, str(HERE / "proxy_servers.py"), "upstream", str(up_port)]
    upstream = Target("direct", 1, up_argv, up_port)
    rounds: list[dict[str, Any]] = []
    try:
        with ExitStack() as stack:
            up = stack.enter_context(started(upstream))
            wait_up(up.url, up.proc)
            routes.write_text(ROUTES_CONFIG.format(upstream=up.url))
            proxies = targets(up.url, noop, routes, httpcore=not args.no_httpcore)
            for t in proxies:
                stack.enter_context(started(t))
            for t in proxies:
                wait_up(t.url, t.proc)
            everyone = [up, *proxies]
            for i in range(rounds_n):
                sys.stderr.write(f"round {i + 1}/{rounds_n} ...\n")
                rounds.append(asyncio.run(one_round(everyone, bodies, n, seconds)))
    finally:
        noop.unlink(missing_ok=True)
        routes.unlink(missing_ok=True)
    load_after = os.getloadavg()
    names = [t.name for t in everyone]
    out = [
        f"machine: {os.cpu_count()} CPUs; 1-min load average {load_before[0]:.2f} before, "
        f"{load_after[0]:.2f} after (includes this benchmark's own processes)",
        f"{rounds_n} rounds; figures are median [min-max] over rounds; "
        f"{n} sequential requests per small case, {seconds:g} s of load per cell",
        "",
    ]
    figures(rounds, names, out)
    out += ["", "Targets (issues 12, 25, 30, 36), ratios taken within each round:"]
    for label, measured, status in verdicts(rounds):
        out.append(f"  {status:7} {label:64} {measured}")
    sys.stdout.write("\n".join(out) + "\n")
    if args.json:
        Path(args.json).write_text(json.dumps({"load": [load_before, load_after],
                                               "rounds": rounds}, indent=1))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
