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
from bridge_rules.lsp.convert import TextOf, word_range
from bridge_rules.lsp.workspace import absolute
from bridge_rules.resources import profile_names, profile_path
from bridge_rules.runtime import Runtime
from bridge_rules.source import Span

_WIRE = re.compile(r"\bwire:\s*['\"]?([^\s,'\"}\]]+)")


def location(span: Span, text_of: TextOf) -> types.Location:
    """A finding's or a stage's span as the token written there, in that file's own text."""
    path, text = text_of(span.file)
    return types.Location(
        uri=Path(path).as_uri(), range=word_range(text, span.line - 1, span.col - 1)
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


def hover_text(rt: Runtime | None, word: str, tool: str | None, bound: bool = False) -> str | None:
    """The hover for ``word``: a code's documentation, a tool's trace, a field's schema.
    ``bound``: ``word`` is a binding's ``local``, traced even when no stage knows it (as
    ``explain --any`` traces it: the binding is what the author is looking at)."""
    if re.fullmatch(r"BR\d{3}", word, re.IGNORECASE):
        return code_doc(word)
    if rt is None:
        return None
    found = explanation(rt, word) or (explain_tool(rt, word) if bound else None)
    if found is not None:
        text = f"```text\n{found.render_text()}```\n"
        decided = found.decided_by
        if decided is not None:
            link = f"{Path(absolute(decided.span.file)).as_uri()}#L{decided.span.line}"
            text += f"\nDecided by stage [{decided.stage} ({decided.span})]({link})\n"
        return text
    return field_doc(rt, word, tool)


def definition(rt: Runtime | None, word: str, line: str, text_of: TextOf) -> types.Location | None:
    """Where ``word`` is decided: a pin entry for a binding's wire, a profile's file for an
    ``extends`` name, else the stage that decides the tool's wire name."""
    wire = _WIRE.search(line)
    if rt is not None and wire is not None and wire.group(1) == word:
        pinned = _pin_entry(rt, word, text_of)
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
    return location(found.decided_by.span, text_of)


def _pin_entry(rt: Runtime, tool: str, text_of: TextOf) -> types.Location | None:
    pin = rt.rules.pin
    if pin is None or pin.path is None or tool not in pin.tools:
        return None
    path, text = text_of(str(pin.path.resolve()))
    lines, name = text.lines, json.dumps(tool)
    after = next((i for i, line in enumerate(lines) if '"tools":' in line.replace('": ', '":')), 0)
    hit = next(
        (i for i in range(after, len(lines)) if name + ":" in lines[i].replace('": ', '":')), after
    )
    col = max(lines[hit].find(name), 0) if lines else 0
    return types.Location(uri=Path(path).as_uri(), range=text.range(hit, col, col + len(name)))
