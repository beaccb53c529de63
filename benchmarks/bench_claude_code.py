"""Time to the first SSE byte through ``serve --upstream claude-code`` with the real CLI,
beyond the model endpoint's own: a fake endpoint on loopback that answers at once, a
conversation of 1 and of 100 turns, the proxy in this process. The floor is a streaming
request straight to the fake endpoint, timed the same way.

Each figure is taken cold (``--claude-spares 0``: a CLI started per request, today's path),
warm (``--claude-spares 2``: the request takes the spare its shape's previous request
left, started while the client paused for ``--pause`` seconds, as an agent does while it
runs a tool or its user types) and warm with ``--claude-prepare`` (the spare also has the
conversation's history replayed), in the same run, one proxy each. Turn 100 is a
conversation that goes on (turn 100, 101, ...), through one worker.

    PYTHONPATH=src python benchmarks/bench_claude_code.py [--runs N] [--pause S]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "e2e"))
from scripted import ScriptedEndpoint, done
from servers import running_app

from bridge_rules.proxy import ProxyConfig, create_app


def conversation(turns: int) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    for n in range(turns - 1):
        messages.append({"role": "user", "content": f"question {n}"})
        messages.append({"role": "assistant", "content": f"answer {n}"})
    messages.append({"role": "user", "content": "the last question"})
    tool = {"name": "Bash", "description": "run", "input_schema": {"type": "object"}}
    return {
        "model": "claude-sonnet-4-6",
        "max_tokens": 64,
        "stream": True,
        "messages": messages,
        "tools": [tool],
    }


def first_byte_ms(url: str, body: dict[str, Any]) -> float:
    started = time.perf_counter()
    with httpx.stream("POST", f"{url}/v1/messages", json=body, timeout=60) as reply:
        chunks = reply.iter_raw()
        next(chunks)
        took = (time.perf_counter() - started) * 1000
        for _ in chunks:
            pass
    return took


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--pause", type=float, default=1.0)
    args = parser.parse_args()
    runs = args.runs
    print(f"load average at start: {os.getloadavg()}")
    with ScriptedEndpoint([done("hi")]) as endpoint:
        os.environ["ANTHROPIC_BASE_URL"] = endpoint.url
        os.environ["ANTHROPIC_API_KEY"] = "sk-ant-bench"
        floor = statistics.median(first_byte_ms(endpoint.url, conversation(1)) for _ in range(runs))
        print(f"endpoint itself: p50 {floor:.1f} ms")
        setups = {
            "cold (--claude-spares 0)": {"claude_spares": 0},
            "warm (--claude-spares 2)": {"claude_spares": 2},
            "warm, prepared (--claude-spares 2 --claude-prepare)": {
                "claude_spares": 2,
                "claude_prepare": True,
            },
        }
        for name, settings in setups.items():
            config = ProxyConfig(upstream="claude-code", **settings)
            with running_app(create_app(config)) as url:
                for turns in (1, 100):
                    first_byte_ms(url, conversation(turns))  # the binary read from disk
                    times = []
                    for n in range(runs):
                        time.sleep(args.pause)
                        # turn 1 again and again (a new conversation of one shape); else
                        # a conversation that goes on: turn 100, 101, ...
                        body = conversation(1 if turns == 1 else turns + n)
                        times.append(first_byte_ms(url, body))
                    times.sort()
                    p50 = statistics.median(times) - floor
                    p90 = times[int(0.9 * (len(times) - 1))] - floor
                    print(
                        f"{name}, turn {turns}: beyond the endpoint p50 {p50:.0f} ms, "
                        f"p90 {p90:.0f} ms"
                    )
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
