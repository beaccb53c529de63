"""``python benchmarks/bench_outbound.py``: the rewriters against an orjson floor, in one run.

Payloads are deterministic and shaped like pi's real requests (its system
prompt and tools from a capture, then a long history of text, ``tool_use`` and
``tool_result`` turns). Every figure is a ratio to a floor measured in the same
process, so the numbers compare across machines; nothing here asserts timings.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable
from typing import Any

import orjson
from outbound_bound import _best  # beside this file, as the script's directory is on sys.path

from bridge_rules import Engine, load

_WORDS = [
    "the",
    "file",
    "line",
    "read",
    "tool",
    "call",
    "result",
    "path",
    "error",
    "value",
    "config",
    "test",
    "module",
]
_CALLS: list[tuple[str, Callable[[random.Random], dict[str, Any]]]] = [
    ("read", lambda r: {"path": f"src/m{r.randrange(999)}.py", "offset": 1, "limit": 200}),
    (
        "bash",
        lambda r: {"command": f"grep -rn {r.choice(_WORDS)} src | head -{r.randrange(9, 99)}"},
    ),
    ("ls", lambda r: {"path": "."}),
    ("grep", lambda r: {"pattern": r.choice(_WORDS), "path": "src"}),
    ("edit", lambda r: {"path": "a.py", "edits": [{"oldText": "x = 1", "newText": "x = 2"}]}),
    ("find", lambda r: {"pattern": "**/*.py"}),
]
_TOOLS = ["read", "bash", "edit", "write", "grep", "find", "ls"]


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words))


DENSITY = {"dense": (20, 200), "sparse": (1500, 4000)}
"""Words per tool result: dense is one tool_use per ~900 bytes, sparse one per ~18 KB."""


def pi_conversation(size: int, seed: int = 5, density: str = "dense") -> dict[str, Any]:
    """A request of about ``size`` bytes: pi's tools, then turns until the size is reached."""
    rng = random.Random(seed)
    low, high = DENSITY[density]
    schema = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    payload: dict[str, Any] = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 32000,
        "stream": True,
        "system": [{"type": "text", "text": "You are an expert coding assistant. " * 60}],
        "tools": [
            {"name": n, "description": _text(rng, 40), "input_schema": schema} for n in _TOOLS
        ],
        "messages": [{"role": "user", "content": [{"type": "text", "text": _text(rng, 12)}]}],
    }
    messages = payload["messages"]
    total, turn = len(orjson.dumps(payload)), 0
    while total < size:
        picks = [rng.choice(_CALLS) for _ in range(rng.randrange(1, 4))]
        uses = [
            {"type": "tool_use", "id": f"toolu_{turn:06d}{i}", "name": n, "input": make(rng)}
            for i, (n, make) in enumerate(picks)
        ]
        results = [
            {
                "type": "tool_result",
                "tool_use_id": u["id"],
                "content": _text(rng, rng.randrange(low, high)),
                "is_error": False,
            }
            for u in uses
        ]
        assistant = {
            "role": "assistant",
            "content": [{"type": "text", "text": _text(rng, 15)}, *uses],
        }
        user = {"role": "user", "content": results}
        messages += [assistant, user]
        total += len(orjson.dumps(assistant)) + len(orjson.dumps(user)) + 2
        turn += 1
    return payload


def pi_payload(size: int, seed: int = 5, density: str = "dense") -> bytes:
    return orjson.dumps(pi_conversation(size, seed, density))


def bench_outbound(engine: Engine, raw: bytes, repeat: int) -> tuple[float, float, float]:
    env: dict[str, str] = {}

    def floor() -> bytes:
        return orjson.dumps(orjson.loads(raw))

    def full() -> bytes:
        return orjson.dumps(engine.outbound(orjson.loads(raw), env=env).payload)

    obj = orjson.loads(raw)
    uses = [
        (b["name"], b["input"])
        for m in obj["messages"]
        for b in m["content"]
        if b.get("type") == "tool_use"
    ]

    def seam() -> None:
        for name, args in uses:
            engine.outbound_call(name, args)

    floor_t = full_t = seam_t = float("inf")
    for _ in range(repeat):  # interleaved, so drift affects both alike
        floor_t = min(floor_t, _best(floor, 1))
        full_t = min(full_t, _best(full, 1))
        seam_t = min(seam_t, _best(seam, 1))
    return floor_t, full_t, seam_t


def _sse(events: int) -> tuple[bytes, int]:
    rng = random.Random(7)
    out, count, index = [], 0, 0
    while count < events:
        out.append(
            b'event: content_block_start\ndata: {"type":"content_block_start","index":%d,'
            b'"content_block":{"type":"text","text":""}}\n\n' % index
        )
        for _ in range(20):
            delta = {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "text_delta", "text": _text(rng, 4)},
            }
            out.append(b"event: content_block_delta\ndata: " + orjson.dumps(delta) + b"\n\n")
        out.append(
            b'event: content_block_stop\ndata: {"type":"content_block_stop","index":%d}\n\n' % index
        )
        index += 1
        name = rng.choice(["Read_ide", "mcp__pi__ls", "Bash"])
        block = {"type": "tool_use", "id": f"toolu_{index}", "name": name, "input": {}}
        out.append(
            b"event: content_block_start\ndata: "
            + orjson.dumps({"type": "content_block_start", "index": index, "content_block": block})
            + b"\n\n"
        )
        for part in ('{"path": "src/', 'a.py"}'):
            delta = {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "input_json_delta", "partial_json": part},
            }
            out.append(b"event: content_block_delta\ndata: " + orjson.dumps(delta) + b"\n\n")
        out.append(
            b'event: content_block_stop\ndata: {"type":"content_block_stop","index":%d}\n\n' % index
        )
        index += 1
        count += 26
    return b"".join(out), count


SECTIONS = ("requests", "gc", "cold", "replay", "inbound")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python benchmarks/bench_outbound.py", description=__doc__
    )
    parser.add_argument("--rules", action="append", help="rules to load (default: packaged)")
    parser.add_argument("--quick", action="store_true", help="fewer repetitions, smaller replay")
    parser.add_argument(
        "--only",
        action="append",
        choices=SECTIONS,
        help="run only these sections (repeatable); --replay is --only cold --only replay",
    )
    parser.add_argument("--replay", action="store_true", help="the message cache sections")
    parser.add_argument("--gc", action="store_true", help="the collector section")
    args = parser.parse_args(argv)
    only = set(args.only or ())
    if args.replay:
        only |= {"cold", "replay"}
    if args.gc:
        only.add("gc")
    sections = only or set(SECTIONS)
    engine = load(args.rules)
    scale = 4 if args.quick else 1
    write = sys.stdout.write
    if "requests" in sections:
        requests(engine, scale, write)
    if sections & {"gc", "cold", "replay"}:
        import outbound_cache as oc  # beside this file

        if "gc" in sections:
            write("collector: today's path at 1 MB and 10 MB dense (ratios to the floor)\n")
            for label, size, repeat in (("1 MB", 1_000_000, 30), ("10 MB", 10_000_000, 6)):
                oc.gc_effect(label, pi_payload(size), max(repeat // scale, 2), write)
        if "cold" in sections:
            write("cold request (empty cache) vs today's path, best of N\n")
            for density in ("dense", "sparse"):
                for label, size, repeat in (("30 KB", 30_000, 200), ("1 MB", 1_000_000, 20)):
                    raw = pi_payload(size, density=density)
                    oc.cold(f"{label} {density}", raw, max(repeat // scale, 2), write)
            oc.cold("10 MB dense", pi_payload(10_000_000), max(6 // scale, 2), write)
        if "replay" in sections:
            size = 300_000 if args.quick else 1_000_000
            write(
                "replayed conversation (each request = the previous + 2 messages, pi's "
                "cache_control), summed outbound time vs summed floor\n"
            )
            for density in ("dense", "sparse"):
                conversation = pi_conversation(size, density=density)
                oc.replay(density, conversation, 2 if args.quick else 5, write)
            write("a 60-turn pi conversation, each turn the previous + 2 messages (issue 36)\n")
            oc.replay_turns(pi_conversation(size), 60, 3 if args.quick else 10, write)
    if "inbound" in sections:
        inbound(engine, scale, write)
    return 0


def requests(engine: Engine, scale: int, write: Callable[[str], object]) -> None:
    sizes = [
        ("30 KB", 30_000, 400 // scale, 2.5),
        ("1 MB", 1_000_000, 40 // scale, 1.3),
        ("10 MB", 10_000_000, 8 // scale, 1.3),
    ]
    write("outbound request: parse + transform + serialise vs orjson loads+dumps (best of N)\n")
    write(
        f"  {'size':>6} {'bytes':>10} {'floor':>10} {'outbound':>10} {'ratio':>6} target"
        "         (of which the calls seam, history tool_use -> outbound_call)\n"
    )
    import outbound_bound  # beside this file

    for label, size, repeat, target in sizes:
        raw = pi_payload(size)
        floor_t, full_t, seam_t = bench_outbound(engine, raw, max(repeat, 2))
        ratio = full_t / floor_t
        verdict = "ok" if ratio <= target else "MISSED"
        write(
            f"  {label:>6} {len(raw):>10} {floor_t * 1e3:>8.2f}ms {full_t * 1e3:>8.2f}ms "
            f"{ratio:>5.2f}x <= {target}x {verdict:<6} ({seam_t * 1e3:.2f}ms = "
            f"{seam_t / floor_t:.2f}x the floor)\n"
        )
        walks = outbound_bound.bound(raw, floor_t, max(repeat, 2))
        write(f"         the least walks in Python, of the floor: {walks}\n")


def inbound(engine: Engine, scale: int, write: Callable[[str], object]) -> None:
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "stop_reason": "tool_use",
        "content": [{"type": "text", "text": "ok"}]
        + [
            {"type": "tool_use", "id": f"toolu_{i}", "name": n, "input": {"path": "a.py"}}
            for i, n in enumerate(["Read_ide", "mcp__pi__ls", "Bash", "Grep"] * 4)
        ],
    }
    raw_msg = orjson.dumps(message)
    registered = list(_TOOLS)
    loops = 2000 // scale
    floor_t = _best(lambda: [orjson.dumps(orjson.loads(raw_msg)) for _ in range(loops)], 5) / loops
    full_t = (
        _best(
            lambda: [
                orjson.dumps(engine.inbound(orjson.loads(raw_msg), registered))
                for _ in range(loops)
            ],
            5,
        )
        / loops
    )
    calls = len(message["content"]) - 1
    write(
        f"inbound response ({calls} tool calls): floor {floor_t * 1e6:.1f}us, with rewrite "
        f"{full_t * 1e6:.1f}us ({full_t / floor_t:.2f}x), "
        f"{(full_t - floor_t) / calls * 1e6:.2f}us per call\n"
    )

    stream, events = _sse(2600 // scale)
    chunks = [stream[i : i + 1400] for i in range(0, len(stream), 1400)]
    parse_t = _best(
        lambda: [
            orjson.loads(line[6:]) for line in stream.split(b"\n") if line.startswith(b"data: ")
        ],
        5,
    )
    sse_t = _best(lambda: b"".join(engine.inbound_stream(chunks, registered)), 5)
    write(
        f"sse stream ({events} events, 1400-byte chunks): {sse_t / events * 1e6:.2f}us per event "
        f"({sse_t / parse_t:.2f}x parsing every event's data with orjson)\n"
    )


if __name__ == "__main__":
    sys.exit(main())
