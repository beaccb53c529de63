"""JSON: ``{"version": 1, "diagnostics": [...], "summary": {...}}`` for tools and scripts."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TextIO

from bridge_rules.diagnostics import Diagnostic
from bridge_rules.reporters import Summary


def report(diags: Sequence[Diagnostic], summary: Summary, stream: TextIO) -> None:
    doc = {
        "version": 1,
        "diagnostics": [d.to_dict() for d in diags],
        "summary": summary.to_dict(),
    }
    stream.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
