"""``python benchmarks/bench_stream_recovery.py``: what ``<tool_call>`` recovery costs a stream.

The same SSE streams rewritten by the default rules (the floor, measured in the same run)
and by the default rules with ``text.recover_tool_calls`` on; reported in microseconds per
stream and as a ratio against the floor, so the figure means the same on any machine.
"""

from __future__ import annotations

import sys
import tempfile
import timeit
from pathlib import Path

import orjson

import bridge_rules

ROOT = Path(__file__).resolve().parent.parent
REGISTERED = ["read", "bash", "ls"]


def _event(data: dict[str, object]) -> bytes:
    return b"event: " + str(data["type"]).encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"


def prose_stream(chars: int, step: int = 8) -> bytes:
    """A long text answer (no tags), ``step`` characters a delta, as models stream prose."""
    text = ("The build passed; reading the next file now. " * (chars // 46 + 1))[:chars]
    out = _event({"type": "message_start", "message": {"id": "msg_b", "content": []}})
    start = {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "text", "text": ""},
    }
    out += _event(start)
    for i in range(0, len(text), step):
        delta = {"type": "text_delta", "text": text[i : i + step]}
        out += _event({"type": "content_block_delta", "index": 0, "delta": delta})
    out += _event({"type": "content_block_stop", "index": 0})
    out += _event({"type": "message_delta", "delta": {"stop_reason": "end_turn"}})
    return out + _event({"type": "message_stop"})


def _per_stream(engine: bridge_rules.Engine, chunks: list[bytes], number: int = 200) -> float:
    """Best of five, in microseconds per stream."""

    def once() -> None:
        b"".join(engine.inbound_stream(chunks, REGISTERED))

    return min(timeit.repeat(once, number=number, repeat=5)) / number * 1e6


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        rules = Path(tmp) / "recover.yaml"
        rules.write_text(
            "bridge-rules: 1\nextends: default\ntext:\n  recover_tool_calls: true\n", "utf-8"
        )
        plain, recovering = bridge_rules.load(), bridge_rules.load(str(rules))
    streams = {
        "examples/stream.sse": (ROOT / "examples" / "stream.sse").read_bytes(),
        "prose, 4 KB": prose_stream(4096),
    }
    print(f"{'stream':<22} {'bytes':>7} {'floor us':>9} {'recovery us':>12} {'ratio':>6}")
    for name, data in streams.items():
        chunks = [data[i : i + 256] for i in range(0, len(data), 256)]
        runs = [_per_stream(engine, chunks) for engine in (plain, recovering)]
        print(
            f"{name:<22} {len(data):>7} {runs[0]:>9.0f} {runs[1]:>12.0f} {runs[1] / runs[0]:>6.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
