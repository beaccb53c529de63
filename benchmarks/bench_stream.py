"""``python benchmarks/bench_stream.py``: what rewriting an SSE stream costs.

* per event, against a floor measured in the same run: ``orjson.loads`` of every
  event's data (the least a rewriter that parsed every event would do). Two streams:
  ``tool-dense`` (bench_outbound's: 22 text deltas, then a tool call whose name the
  default rules map back and, two times in three, whose arguments they adapt) and
  ``prose`` (one text block, 8 characters a delta, as models stream answers);
* one long event with no boundary fed in 1 KiB chunks (16 and 50 MB): seconds, which
  grow linearly with the size.

Times are CPU time of this process (``time.process_time``), best of several rounds,
the floor and the rewrite interleaved, so a busy machine moves both alike. Not quite
alike: on a shared 2-core machine the ratios of runs minutes apart differ by up to 0.3,
so compare versions in alternating runs; the load average is printed with them.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import timeit
from collections.abc import Callable

import orjson
from bench_outbound import _TOOLS, _sse
from bench_stream_recovery import prose_stream

import bridge_rules


def _best(fn: Callable[[], None], number: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=3, timer=time.process_time)) / number


def per_event(engine: bridge_rules.Engine, stream: bytes, rounds: int) -> tuple[float, float]:
    """(microseconds per event, ratio to the orjson floor), 1400-byte chunks."""
    chunks = [stream[i : i + 1400] for i in range(0, len(stream), 1400)]
    registered = list(_TOOLS)
    events = stream.count(b"\n\n")

    def floor() -> None:
        [orjson.loads(line[6:]) for line in stream.split(b"\n") if line.startswith(b"data: ")]

    def rewrite() -> None:
        b"".join(engine.inbound_stream(chunks, registered))

    floor_t = rewrite_t = float("inf")
    for _ in range(rounds):
        floor_t = min(floor_t, _best(floor, 5))
        rewrite_t = min(rewrite_t, _best(rewrite, 5))
    return rewrite_t / events * 1e6, rewrite_t / floor_t


def one_long_event(engine: bridge_rules.Engine, size: int) -> float:
    body = (
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"text_delta","text":"' + b"x" * size + b'"}}'
    )
    chunks = [body[i : i + 1024] for i in range(0, len(body), 1024)] + [b"\n\n"]
    began = time.process_time()
    out = b"".join(engine.inbound_stream(chunks, list(_TOOLS)))
    took = time.process_time() - began
    assert len(out) == len(body) + 2
    return took


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/bench_stream.py", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer rounds, 16 MB only")
    args = parser.parse_args(argv)
    rounds = 4 if args.quick else 12
    engine = bridge_rules.load()
    print("load average: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    streams = {"tool-dense": _sse(2600)[0], "prose": prose_stream(64 * 1024)}
    for name, stream in streams.items():
        us, ratio = per_event(engine, stream, rounds)
        events = stream.count(b"\n\n")
        print(
            f"{name:<11} {events:>6} events: {us:5.2f} us per event, "
            f"{ratio:.2f}x parsing every event's data with orjson"
        )
    for mb in (16,) if args.quick else (16, 50):
        print(f"one {mb} MB event, 1 KiB chunks: {one_long_event(engine, mb << 20):.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
