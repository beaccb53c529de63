"""Regenerate the golden outputs: ``.venv/bin/python tests/golden/regen.py``.

Review the diff by eye before committing: a golden file is a claim that this
output is right. Each capture is a real pi request (copied from
the reference captures); its golden file is the rewritten request plus
the result's renames, drops and registered names, under the packaged default
rules with the gate open.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import orjson

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
EXAMPLES = ROOT / "examples"
REGISTERED = ["read", "bash", "edit", "write", "grep", "find", "ls"]


def render(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2) + b"\n"


def outputs() -> dict[str, bytes]:
    import bridge_rules

    engine = bridge_rules.load()
    out: dict[str, bytes] = {}
    for capture in sorted((HERE / "captures").glob("*.json")):
        result = engine.outbound(orjson.loads(capture.read_bytes()), env={})
        summary = {
            "gate_open": result.gate_open,
            "renames": result.renames,
            "dropped": result.dropped,
            "registered": result.registered,
            "payload": result.payload,
        }
        out[f"outbound-{capture.name}"] = render(summary)
    message = orjson.loads((EXAMPLES / "response.json").read_bytes())
    out["inbound-response.json"] = render(engine.inbound(message, REGISTERED))
    stream = (EXAMPLES / "stream.sse").read_bytes()
    out["stream.sse"] = b"".join(engine.inbound_stream([stream], REGISTERED))
    return out


def main() -> int:
    target = HERE / "out"
    target.mkdir(exist_ok=True)
    for name, data in outputs().items():
        (target / name).write_bytes(data)
    sys.stdout.write(f"wrote {len(outputs())} golden files to {target}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
