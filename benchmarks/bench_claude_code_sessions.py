"""Per-turn latency of real ten-turn sessions through ``serve --workers 2 --upstream
claude-code``, warm path off and on: the table in docs/claude-code-upstream.md.

The sessions are the e2e test's (tests/e2e/claude_sessions.py): the ``anthropic`` SDK
(streaming), pi and opencode each run ten user turns, five with a tool call, against a
scripted endpoint on loopback that answers at once. A byte relay in front of ``serve``
times each request from its first byte to the first byte of the answer's body, as the
client sees it; a turn's figure is the request that carries its prompt. The endpoint's
own time, taken the same way through a relay straight at it, is subtracted.

    PYTHONPATH=src python benchmarks/bench_claude_code_sessions.py [--warm off,spares,prepare]
        [--clients sdk,pi,opencode] [--repeat N] [--settle SECONDS]

``--warm`` names entries of claude_sessions.WARM (off: ``--claude-spares 0``; spares:
``--claude-spares 2``; prepare: that and ``--claude-prepare``); by default every one this
``serve`` has.
With ``--repeat N`` each turn's figure is the median over N sessions. pi and opencode are
installed with npm the first time (tests/e2e/toolchain.py's cache).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "e2e"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from claude_sessions import (
    HELLO,
    claude_serve,
    endpoint_for,
    session_turns,
    spares_taken,
    turn_ms,
    warm_modes,
)
from opencode_driver import install_opencode
from pi_driver import install_pi
from scripted import ScriptedEndpoint, done
from session_clients import run_client
from timing_relay import TimingRelay
from toolchain import cache_dir

TURN = {"model": "claude-sonnet-4-6", "max_tokens": 64, "stream": True, "messages": []}


def floor_ms(runs: int = 10) -> float:
    """The endpoint's own time to the first body byte, through a relay as the sessions'."""
    body = {**TURN, "messages": [{"role": "user", "content": "hi"}]}
    with ScriptedEndpoint([done("hi")]) as endpoint, TimingRelay(endpoint.url) as relay:
        for _ in range(runs):
            with httpx.stream("POST", f"{relay.url}/v1/messages", json=body) as reply:
                reply.read()
        return statistics.median(t.ms or 0.0 for t in relay.requests)


def one_session(
    client: str, warm: str, settle: float, floor: float
) -> tuple[list[float], list[int]]:
    """The ten turns' times beyond the endpoint, in milliseconds, and the access lines'
    ``spare`` of the session's requests that took a spare CLI."""
    agent = {"sdk": None, "pi": install_pi, "opencode": install_opencode}[client]
    scratch = Path(tempfile.mkdtemp(prefix="bench-cc-"))
    try:
        project = scratch / "project"
        project.mkdir()
        (project / "hello.txt").write_text(HELLO)
        opencode = client == "opencode"
        turns = session_turns(project if opencode else None, described=opencode)
        binary = None if agent is None else agent(cache_dir())
        endpoint = endpoint_for(turns)
        rules = ["opencode"] if opencode else []
        log = scratch / "serve.log"
        with endpoint, claude_serve(endpoint, warm, *rules, log=log) as relay:
            time.sleep(settle)  # a server that has been up a moment, as a user meets it
            answers, _ = run_client(client, binary, scratch, relay.url, turns)
            if answers != [f"TURN-{n}-DONE" for n in range(1, 11)]:
                raise SystemExit(f"{client}: the session went wrong: {answers}")
        return turn_ms(relay.requests, floor), spares_taken(log)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--warm", default=",".join(warm_modes()))
    parser.add_argument("--clients", default="sdk,pi,opencode")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--settle", type=float, default=3.0)
    args = parser.parse_args()
    floor = floor_ms()
    print(f"endpoint itself: p50 {floor:.1f} ms to the first body byte")
    print(f"load average at the start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print()
    print("| client | warm | turn 1 | median turn | turn 10 | took a spare | prepared |")
    print("|---|---|---|---|---|---|---|")
    for client in args.clients.split(","):
        for warm in args.warm.split(","):
            done = [one_session(client, warm, args.settle, floor) for _ in range(args.repeat)]
            per_turn = [statistics.median(r[n] for r, _ in done) for n in range(10)]
            cells = [per_turn[0], statistics.median(per_turn), per_turn[9]]
            shown = " | ".join(f"{ms:.0f} ms" for ms in cells)
            taken = [n for _, spares in done for n in spares]
            prepared = sum(n > 1 for n in taken)
            of = f"of {15 * len(done)}"
            row = f"| {client} | {warm} | {shown} | {len(taken)} {of} | {prepared} {of} |"
            print(row, flush=True)
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
