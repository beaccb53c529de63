"""``python benchmarks/bench_calls.py``: the cost of adapting one tool call's arguments.

Reported in microseconds per call and as a ratio against a floor measured in
the same run (an orjson loads+dumps round trip of the same arguments, the least
a proxy does with them), so the figure means the same on any machine.

``--scale`` adds inbound name lookups at scale: a request with 1,000 tools (the
first lookup builds the reverse map for that set; later requests with the same
set find it cached), and ``inbound_name(name, registered=None)`` over rule sets
with 50,000 and 100,000 alias entries, against a plain dict lookup.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
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


def _once_ms(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1e3


def _aliases(count: int) -> Any:
    """A runtime whose rules add ``count`` alias entries (compiled without the lint pass)."""
    from pathlib import Path

    from bridge_rules.compiler import compile_rules
    from bridge_rules.compose import load_sources

    lines = ["bridge-rules: 1", "extends: default", "names:", "  - kind: aliases", "    id: big"]
    lines += ["    case: exact", "    map:"]
    lines += [f"      tool_{i}: mcp__big__t{i}" for i in range(count)]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "aliases.yaml"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return compile_rules(load_sources(str(path)))


def scale(number: int) -> None:
    import bridge_rules

    out = sys.stdout
    rt = bridge_rules.load().runtime
    table = {f"mcp__pi__t{i}": f"t{i}" for i in range(1000)}
    floor = _per_call(partial(table.get, "mcp__pi__t500"), number)
    out.write(f"inbound names at scale (dict lookup floor: {floor:.3f} µs)\n")
    tools = tuple(f"t{i}" for i in range(1000))
    cold = statistics.median(
        _once_ms(
            partial(rt.inbound_name, f"mcp__pi__c{k}x500", tuple(f"c{k}x{i}" for i in range(1000)))
        )
        for k in range(5)
    )
    sets = [tuple(f"u{k}x{i}" for i in range(1000)) for k in range(5)]
    for name in (n for names in sets for n in names):  # the request's tools[] rewrite does this
        rt.outbound_name(name)
    first = statistics.median(
        _once_ms(partial(rt.inbound_name, f"mcp__pi__u{k}x500", names))
        for k, names in enumerate(sets)
    )
    rt.inbound_name("mcp__pi__t500", tools)
    same = _per_call(partial(rt.inbound_name, "mcp__pi__t500", tools), number)
    as_list = list(tools)
    again = _per_call(partial(rt.inbound_name, "mcp__pi__t500", as_list), number // 20)
    out.write(
        f"  1,000 tools: first lookup for a set {first:.2f} ms after the request's outbound "
        f"names ({cold:.2f} ms for names never seen; medians of 5 sets), then {same:.3f} µs "
        f"per call with the request's tuple, {again:.2f} µs from a list (copied and hashed "
        "per call)\n"
    )
    for count in (50_000, 100_000):
        big = _aliases(count)
        first = _once_ms(partial(big.inbound_name, "mcp__big__t77"))
        per = _per_call(partial(big.inbound_name, "mcp__big__t77"), number)
        out.write(
            f"  {count:,} alias entries, registered=None: {per:.3f} µs per call = "
            f"{per / floor:.1f}x the dict lookup (the first call {first:.0f} ms builds the map, "
            "once per rule set)\n"
        )


def main(number: int = 20000) -> int:
    import bridge_rules

    if "--scale" in sys.argv[1:]:
        scale(number)
        return 0
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
