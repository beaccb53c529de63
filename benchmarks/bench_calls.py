"""``python benchmarks/bench_calls.py``: the cost of adapting one tool call's arguments.

Reported in microseconds per call and as a ratio against a floor measured in
the same run (an orjson loads+dumps round trip of the same arguments, the least
a proxy does with them), so the figure means the same on any machine.
"""

from __future__ import annotations

import sys
import timeit
from collections.abc import Callable
from functools import partial
from typing import Any

import orjson

CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("Read", "read", {"file_path": "/src/app/main.py", "offset": 10, "limit": 200}),
    (
        "Edit",
        "edit",
        {
            "file_path": "/src/a.py",
            "old_string": "x = 1\n" * 5,
            "new_string": "x = 2\n" * 5,
            "replace_all": False,
        },
    ),
    ("Bash", "bash", {"command": "npm test 2>&1", "timeout": 120000, "description": "Run"}),
    ("Grep", "grep", {"pattern": "TODO", "-i": True, "-C": 2, "head_limit": 50}),
    (
        "WebSearch",
        "web_search",
        {"query": "q", "allowed_domains": ["a.org"], "blocked_domains": ["b.com", "c.net"]},
    ),
]
REGISTERED = ["read", "write", "edit", "bash", "grep", "find", "ls", "web_search"]


def _round_trip(raw: bytes) -> bytes:
    return orjson.dumps(orjson.loads(raw))


def _per_call(fn: Callable[[], object], number: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6


def main(number: int = 20000) -> int:
    import bridge_rules

    eng = bridge_rules.load()
    out = sys.stdout
    out.write(f"{'call':<12}{'floor µs':>10}{'inbound µs':>12}{'ratio':>8}{'outbound µs':>13}\n")
    for wire, local, args in CASES:
        raw = orjson.dumps(args)
        local_args = eng.inbound_call(wire, args, REGISTERED).arguments
        floor = _per_call(partial(_round_trip, raw), number)
        inbound = _per_call(partial(eng.inbound_call, wire, args, REGISTERED), number)
        outbound = _per_call(partial(eng.outbound_call, local, local_args), number)
        out.write(
            f"{wire:<12}{floor:>10.2f}{inbound:>12.2f}{inbound / floor:>8.1f}{outbound:>13.2f}\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
