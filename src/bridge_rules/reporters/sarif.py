"""SARIF 2.1.0, for GitHub code scanning and other static-analysis viewers.

Rules come from the documented codes (:mod:`bridge_rules.codes`), so a viewer
shows each code's summary; locations are relative URIs with 1-based regions.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import PurePath
from typing import Any, TextIO

from bridge_rules.codes import CODES
from bridge_rules.diagnostics import Diagnostic, Severity
from bridge_rules.reporters import Summary
from bridge_rules.source import Span
from bridge_rules.version import __version__

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _location(span: Span, message: str | None = None) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": PurePath(span.file).as_posix()}}
    if span.line > 0:
        physical["region"] = {"startLine": span.line, "startColumn": max(span.col, 1)}
    location: dict[str, Any] = {"physicalLocation": physical}
    if message is not None:
        location["message"] = {"text": message}
    return location


def _rule(code: str) -> dict[str, Any]:
    doc = CODES.get(code)
    if doc is None:
        return {"id": code}
    return {
        "id": code,
        "name": doc.title.replace(" ", "-"),
        "shortDescription": {"text": doc.title},
        "fullDescription": {"text": doc.summary},
        "help": {"text": f"{doc.summary}\n\nFails:\n{doc.bad}\nPasses:\n{doc.good}"},
        "defaultConfiguration": {"level": "warning" if doc.severity == "warning" else "error"},
    }


def report(diags: Sequence[Diagnostic], summary: Summary, stream: TextIO) -> None:
    codes = sorted({d.code for d in diags})
    index = {code: i for i, code in enumerate(codes)}
    results = []
    for diag in diags:
        text = diag.message + (f"; {diag.hint}" if diag.hint else "")
        result: dict[str, Any] = {
            "ruleId": diag.code,
            "ruleIndex": index[diag.code],
            "level": _LEVEL[diag.severity],
            "message": {"text": text},
            "locations": [_location(diag.span)],
        }
        if diag.related:
            result["relatedLocations"] = [
                {"id": i, **_location(r.span, r.message)} for i, r in enumerate(diag.related)
            ]
        results.append(result)
    run = {
        "tool": {
            "driver": {
                "name": "bridge-rules",
                "version": __version__,
                "informationUri": "https://github.com/bridge-rules/bridge-rules",
                "rules": [_rule(code) for code in codes],
            }
        },
        "results": results,
        "properties": summary.to_dict(),
    }
    doc = {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}
    stream.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
