"""Pin documents (``bridge-rules-pin/1``): built from a request's ``tools[]``, merged, written.

The layout is documented in ``docs/pins.md`` and ``schemas/pin.schema.json``. Each tool
keeps what the model is shown, its ``description`` and ``input_schema``; request-only
keys (``cache_control``, ``eager_input_streaming``) are dropped. ``provenance``
records how the pin was made, one entry a capture in ``sources``, and a sha256 of
the tools so a copied pin can be checked.
"""

from __future__ import annotations

import json
import os
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from bridge_rules.pins import FORMAT, parse_spec, tools_digest

SCHEMA_URL = "https://github.com/bridge-rules/bridge-rules/schemas/pin.schema.json"
_REQUEST_ONLY = {"name", "cache_control", "eager_input_streaming", "defer_loading"}


class DocumentError(ValueError):
    pass


def now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def tool_entries(tools: Any) -> dict[str, dict[str, Any]]:
    """``tools[]`` of a request (or a ``{name: schema}`` table) -> ``{name: entry}``."""
    if isinstance(tools, dict):  # a table of input schemas, as in a runtime capture file
        tools = [{"name": n, "input_schema": s} for n, s in tools.items()]
    if not isinstance(tools, list):
        raise DocumentError("'tools' is neither a list of tools nor an object of schemas")
    out: dict[str, dict[str, Any]] = {}
    for index, tool in enumerate(tools):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise DocumentError(f"tools[{index}] has no 'name'")
        entry = {k: v for k, v in tool.items() if k not in _REQUEST_ONLY}
        if not isinstance(entry.get("input_schema"), dict):  # a server tool (web_search_...)
            entry["input_schema"] = {}
        out[tool["name"]] = entry
    return out


def request_tools(raw: Any) -> Any:
    """The ``tools`` of a request body, or of a ``{path, method, headers, body}`` capture."""
    if isinstance(raw, dict) and isinstance(raw.get("body"), dict):
        raw = raw["body"]
    if isinstance(raw, str):  # a body captured as text
        raw = json.loads(raw)
    if not isinstance(raw, dict) or "tools" not in raw:
        raise DocumentError("no 'tools' in it: give a request body as the agent sent it")
    return raw["tools"]


def build(spec: str, tools: dict[str, dict[str, Any]], source: dict[str, Any]) -> dict[str, Any]:
    name, version = parse_spec(spec)
    return {
        "$schema": SCHEMA_URL,
        "format": FORMAT,
        "name": name,
        "version": version,
        "provenance": {
            "method": source["method"],
            "agent": name,
            "version": version,
            "date": source["date"],
            "sha256": tools_digest(tools),
            "sources": [source],
        },
        "tools": tools,
    }


def merge(old: dict[str, Any], new: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``old`` with the tools only ``new`` has; returns it and the names whose schema differs.

    A capture shows the tools of one configuration (flags, permission tools), so a
    later capture of the same version adds to the pin rather than replacing it.
    """
    if old.get("format") != FORMAT:
        raise DocumentError(f"can only merge into a {FORMAT} pin")
    tools = dict(old["tools"])
    differ = sorted(
        n
        for n, e in new["tools"].items()
        if n in tools and tools[n].get("input_schema") != e["input_schema"]
    )
    added = {n: e for n, e in new["tools"].items() if n not in tools}
    tools.update(added)
    provenance = dict(old["provenance"])
    sources = [*provenance.get("sources", []), *new["provenance"]["sources"]]
    methods = sorted(
        {*str(provenance.get("method", "")).split("+"), *(s["method"] for s in sources)} - {""}
    )
    provenance |= {
        "method": methods[0] if len(methods) == 1 else "+".join(methods),
        "date": new["provenance"]["date"],
        "sha256": tools_digest(tools),
        "sources": sources,
    }
    merged = old | {"provenance": provenance, "tools": tools}
    if "declared_only" in old:  # a capture that sent a declared-only tool settles it
        merged["declared_only"] = [n for n in old["declared_only"] if n not in new["tools"]]
    return merged, differ


def render(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def write(document: dict[str, Any], path: Path) -> None:
    """Write atomically, so an interrupted capture never leaves half a pin on the search path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".pin-", suffix=".json", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(render(document))
    os.replace(tmp, path)
