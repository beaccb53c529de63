#!/usr/bin/env python3
"""Write a runtime pin from one captured Anthropic Messages request.

Maintainer script, for agents whose tool surface is only known at run time
(opencode builds its tool schemas with zod when it starts)::

    python scripts/pin_from_request.py CAPTURE.json opencode@1.18.33 --captured 2026-11-23

CAPTURE is ``{path, method, headers, body}`` (or a bare request body) as the
capture endpoints in ``../shared/reference`` record it. The pin keeps each tool's
``input_schema`` exactly as sent, in the layout of the Claude Code pins (``tools``
keyed by name, read by ``bridge_rules.pins``), plus the descriptions and a
sha256 of the tool content. ``bridge-rules pin import`` (issue 10) supersedes
this script once it lands; the output here is deterministic and
``schemas/SHA256SUMS`` is rewritten.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "schemas"
_SPEC = re.compile(r"^(?P<product>[a-z][a-z0-9-]*)@(?P<version>[0-9][0-9A-Za-z.+-]*)$")


def request_tools(capture: dict[str, Any]) -> list[dict[str, Any]]:
    body = capture.get("body", capture)
    tools = body.get("tools") if isinstance(body, dict) else None
    if not isinstance(tools, list) or not tools:
        raise ValueError("the captured request has no tools[]")
    return tools


def build_pin(capture: dict[str, Any], product: str, version: str, captured: str) -> dict[str, Any]:
    tools = request_tools(capture)
    schemas = {t["name"]: t.get("input_schema", {}) for t in tools}
    content = json.dumps(schemas, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    agent = capture.get("headers", {}).get("user-agent", "")
    return {
        "source": f"runtime capture: {product}@{version}, tools[] of the first request with tools",
        "method": "runtime",
        "agent": product,
        "version": version,
        "captured": captured,
        "user_agent": agent,
        "tools_sha256": hashlib.sha256(content.encode()).hexdigest(),
        "tools": {name: schemas[name] for name in sorted(schemas)},
        "descriptions": {t["name"]: t.get("description", "") for t in tools},
        "mapping_evidence": dict.fromkeys(sorted(schemas), "runtime"),
    }


def render(pin: dict[str, Any]) -> str:
    return json.dumps(pin, indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("capture", type=Path)
    parser.add_argument("spec", help="NAME@VERSION, e.g. opencode@1.18.33")
    parser.add_argument("--captured", required=True, help="the capture's date, YYYY-MM-DD")
    args = parser.parse_args(argv)
    match = _SPEC.match(args.spec)
    if not match:
        sys.stderr.write(f"'{args.spec}' is not NAME@VERSION\n")
        return 2
    capture = json.loads(args.capture.read_text(encoding="utf-8"))
    pin = build_pin(capture, match["product"], match["version"], args.captured)
    path = SCHEMAS / match["product"] / f"{match['version']}.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(render(pin), encoding="utf-8")
    sys.path.insert(0, str(ROOT / "scripts"))
    from pin_schemas import write_sums

    write_sums()
    sys.stdout.write(f"wrote {path.relative_to(ROOT)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
