"""Schema conversions as the sources before issue 36's conversion cuts wrote them.

Every schema of ``corpus.json`` and of the pinned tool schemas (``tests/pins/data``),
converted for every target: the converted schema's bytes, the changes noted and the shape
calls cross it by, in a canonical form. ``python -m tests.schemas.convert_before >
tests/schemas/data/convert_before.json`` was run once on the sources before the cuts
(main at db77154), so ``test_convert_before.py``'s oracle is the old code's output.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PINS = HERE.parent / "pins" / "data"


def schemas() -> Iterator[tuple[str, Any]]:
    """(label, schema): the corpus, then every tool of every pinned schema file."""
    corpus = json.loads((HERE / "corpus.json").read_text(encoding="utf-8"))["schemas"]
    for entry in corpus:
        yield f"corpus {entry['source']} {entry['tool']}", entry["schema"]
    for path in sorted(PINS.glob("*@*.json")):
        tools = json.loads(path.read_text(encoding="utf-8")).get("tools", {})
        for name, tool in sorted(tools.items()):
            yield f"pin {path.stem} {name}", tool.get("input_schema", tool)


ADDED = frozenset({"item_kinds", "wire_item_kinds"})
"""Shape fields added after the file was written (a union's array branches, picked by their
items' kinds): left out at their default, so a shape that does not use them digests as the
old code's did."""


def canonical(value: Any) -> Any:
    """A JSON form of a shape that does not depend on set order or hash seeds."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: canonical(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if f.name not in ADDED or getattr(value, f.name) != f.default
        }
    if isinstance(value, (set, frozenset)):
        return sorted(canonical(v) for v in value)
    if isinstance(value, dict):
        return {str(k): canonical(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    return value


def outcome(conversion: Any) -> dict[str, Any]:
    from bridge_rules import jsonio

    changes = [[c.rule, c.pointer, c.detail] for c in conversion.changes]
    return {
        "schema": _digest(jsonio.dumps(conversion.schema)),
        "unchanged": conversion.schema is conversion.original,
        "rules": sorted({c.rule for c in conversion.changes}),
        "changes": _digest(json.dumps(changes).encode()),
        "shape": _digest(json.dumps(canonical(conversion.shape), sort_keys=True).encode()),
    }


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:32]


def main() -> int:
    from bridge_rules.schemas import TARGETS, convert, profile

    out = {
        f"{label} / {target}": outcome(convert(schema, profile(target)))
        for label, schema in schemas()
        for target in TARGETS
    }
    sys.stdout.write(json.dumps(out, indent=0, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
