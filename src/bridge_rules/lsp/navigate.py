"""Hover and go-to-definition: what ``explain`` and ``codes`` say, where the editor points.

A tool name's hover is :meth:`~bridge_rules.explain.Explanation.render_text`, the very text
``bridge-rules explain NAME`` prints, with a link to the stage that decides it; its
definition is that stage (in whichever file of the ``extends`` chain, packaged profiles
included). A binding's ``wire`` leads to the tool's entry in the pin file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from lsprotocol import types

from bridge_rules.codes import CODES
from bridge_rules.explain import Explanation, explain_tool
from bridge_rules.lsp.workspace import absolute
from bridge_rules.resources import profile_names, profile_path
from bridge_rules.runtime import Runtime
from bridge_rules.source import Span

_WIRE = re.compile(r"\bwire:\s*['\"]?([^\s,'\"}\]]+)")


def location(span: Span) -> types.Location:
    line = max(span.line - 1, 0)
    start = types.Position(line=line, character=max(span.col - 1, 0))
    return types.Location(
        uri=Path(absolute(span.file)).as_uri(), range=types.Range(start=start, end=start)
    )


def local_of(rt: Runtime, name: str) -> str | None:
    """The local tool ``name`` names: itself, or the one that goes out under that wire name."""
    if name in rt.known_locals:
        return name
    found = next((local for local in rt.known_locals if rt.outbound_name(local) == name), None)
    pin = rt.rules.pin
    return found or (name if pin is not None and name in pin.tools else None)


def explanation(rt: Runtime, name: str) -> Explanation | None:
    local = local_of(rt, name)
    return explain_tool(rt, local) if local is not None else None


def code_doc(code: str) -> str | None:
    """``bridge-rules codes CODE`` as markdown."""
    doc = CODES.get(code.upper())
    if doc is None:
        return None
    return (
        f"**{doc.code}** ({doc.severity}): {doc.title}\n\n{doc.summary}\n\n"
        f"Fails:\n```yaml\n{doc.bad}```\n\nPasses:\n```yaml\n{doc.good}```\n"
    )


def field_doc(rt: Runtime, name: str, tool: str | None) -> str | None:
    """An argument field's type and description from the pin (the enclosing tool's first)."""
    pin = rt.rules.pin
    if pin is None:
        return None
    order = ([tool] if tool in pin.tools else []) + sorted(pin.tools)
    for candidate in order:
        props = _properties(pin.tools[candidate])
        if name in props:
            spec = props[name]
            kind = spec.get("type", "any") if isinstance(spec, dict) else "any"
            text = spec.get("description", "") if isinstance(spec, dict) else ""
            return f"**{name}**: `{kind}` (argument of `{candidate}` in {pin.spec})\n\n{text}"
    return None


def _properties(tool: dict[str, Any]) -> dict[str, Any]:
    schema = tool.get("input_schema", tool)
    props = schema.get("properties", {}) if isinstance(schema, dict) else {}
    return props if isinstance(props, dict) else {}


def hover_text(rt: Runtime | None, word: str, tool: str | None) -> str | None:
    """The hover for ``word``: a code's documentation, a tool's trace, a field's schema."""
    if re.fullmatch(r"BR\d{3}", word, re.IGNORECASE):
        return code_doc(word)
    if rt is None:
        return None
    found = explanation(rt, word)
    if found is not None:
        text = f"```text\n{found.render_text()}```\n"
        decided = found.decided_by
        if decided is not None:
            place = location(decided.span)
            link = f"{place.uri}#L{decided.span.line}"
            text += f"\nDecided by stage [{decided.stage} ({decided.span})]({link})\n"
        return text
    return field_doc(rt, word, tool)


def definition(rt: Runtime | None, word: str, line: str) -> types.Location | None:
    """Where ``word`` is decided: a pin entry for a binding's wire, a profile's file for an
    ``extends`` name, else the stage that decides the tool's wire name."""
    wire = _WIRE.search(line)
    if rt is not None and wire is not None and wire.group(1) == word:
        pinned = _pin_entry(rt, word)
        if pinned is not None:
            return pinned
    if word in profile_names() and ("extends" in line or line.lstrip().startswith("- ")):
        path = profile_path(word)
        if path is not None and (rt is None or explanation(rt, word) is None):
            start = types.Position(line=0, character=0)
            return types.Location(uri=path.as_uri(), range=types.Range(start=start, end=start))
    if rt is None:
        return None
    found = explanation(rt, word)
    if found is None or found.decided_by is None:
        return None
    return location(found.decided_by.span)


def _pin_entry(rt: Runtime, tool: str) -> types.Location | None:
    pin = rt.rules.pin
    if pin is None or pin.path is None or tool not in pin.tools:
        return None
    lines = pin.path.read_text(encoding="utf-8").splitlines()
    key = json.dumps(tool) + ":"
    after = next((i for i, text in enumerate(lines) if '"tools":' in text.replace('": ', '":')), 0)
    hit = next((i for i in range(after, len(lines)) if key in lines[i].replace('": ', '":')), after)
    col = max(lines[hit].find(json.dumps(tool)), 0) if lines else 0
    start = types.Position(line=hit, character=col)
    return types.Location(
        uri=pin.path.resolve().as_uri(), range=types.Range(start=start, end=start)
    )
