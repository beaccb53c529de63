"""Completion, quick fixes and the outline of a rule file.

Completion offers what a JSON Schema cannot know: the pinned tools and their fields, the
operations of the rule format with their fields, the policy switches the rules define, the
schema targets and the packaged profiles. Quick fixes only apply what ``lint`` computed:
a "did you mean" it printed, the binding its hint names, a ``suppress:`` entry (the rule
format's own way to silence a finding in the file that declares it).
"""

from __future__ import annotations

import json
import re
from typing import Any

from lsprotocol import types

from bridge_rules.lsp.convert import quoted, word_range
from bridge_rules.lsp.text import Text
from bridge_rules.model_ops import OP_MODELS
from bridge_rules.resources import profile_names
from bridge_rules.runtime import Runtime
from bridge_rules.schemas import TARGETS
from bridge_rules.source import SourceMap

_DID_YOU_MEAN = re.compile(r"did you mean '([^'\n]+)'\?")
_BIND = re.compile(r"bind '([^'\n]+)' to '([^'\n]+)'")
Kind = types.CompletionItemKind
REASON = "say why this is intended"
"""A ``suppress:`` entry's ``reason`` as the quick fix writes it, for the author to replace."""


def completions(rt: Runtime | None) -> list[types.CompletionItem]:
    items: list[types.CompletionItem] = []
    pin = rt.rules.pin if rt is not None else None
    if pin is not None:
        for tool in sorted(pin.tools):
            only = " (declared only)" if tool in pin.declared_only else ""
            items.append(types.CompletionItem(label=tool, kind=Kind.Class, detail=pin.spec + only))
        fields: dict[str, str] = {}
        for tool, schema in pin.tools.items():
            for name in schema.get("properties", {}) or {}:
                fields.setdefault(name, tool)
        items += [
            types.CompletionItem(label=f, kind=Kind.Field, detail=f"argument of {tool}")
            for f, tool in fields.items()
        ]
    for op, model in OP_MODELS.items():
        doc = (model.__doc__ or "").strip()
        spec = next(iter(model.model_fields.values())).annotation
        shape = getattr(spec, "model_fields", None)
        detail = f"{op}: {{{', '.join(shape)}}}" if shape else f"{op}: ..."
        items.append(
            types.CompletionItem(label=op, kind=Kind.Operator, detail=detail, documentation=doc)
        )
    for switch in _switches(rt):
        items.append(
            types.CompletionItem(label=switch, kind=Kind.EnumMember, detail="policy switch")
        )
    items += [
        types.CompletionItem(label=t, kind=Kind.Value, detail="schema target") for t in TARGETS
    ]
    items += [
        types.CompletionItem(label=p, kind=Kind.Module, detail="packaged profile")
        for p in profile_names()
    ]
    return items


def _switches(rt: Runtime | None) -> list[str]:
    if rt is None:
        return []
    found: dict[str, None] = {}
    for sourced in rt.rules.files:
        policy = sourced.rules.policy
        if policy is not None:
            found.update(dict.fromkeys(policy.switch_table))
    return list(found)


def _edit(uri: str, at: types.Range, text: str) -> types.WorkspaceEdit:
    return types.WorkspaceEdit(changes={uri: [types.TextEdit(range=at, new_text=text)]})


def _insert_at_end(lines: list[str], text: str) -> types.Range:
    end = types.Position(line=len(lines), character=0)
    return types.Range(start=end, end=end)


def code_actions(
    uri: str, shown: str, text: Text, diagnostics: list[types.Diagnostic]
) -> list[types.CodeAction]:
    """Quick fixes for the findings in the request's range; each from the finding itself."""
    actions: list[types.CodeAction] = []
    lines = text.lines
    for diag in diagnostics:
        data: Any = diag.data if isinstance(diag.data, dict) else {}
        message = str(data.get("message", diag.message))
        hint = str(data.get("hint") or "")
        fix = _DID_YOU_MEAN.search(message) or _DID_YOU_MEAN.search(hint)
        at = diag.range
        written = (
            lines[at.start.line][text.column(at.start) : text.column(at.end)]
            if at.start.line < len(lines)
            else ""
        )
        if fix and written.strip("'\"") in quoted(message):
            actions.append(
                _action(
                    f"Replace '{written}' with '{fix.group(1)}'",
                    diag,
                    _edit(uri, at, fix.group(1)),
                    True,
                )
            )
        bind = _BIND.search(hint)
        if bind:
            local, wire = bind.groups()
            place, added = _binding_text(lines, local, wire)
            title = f"Add a binding for '{local}'"
            actions.append(_action(title, diag, _edit(uri, place, added), False))
        if diag.severity == types.DiagnosticSeverity.Warning and data.get("file") == shown:
            entry = (
                f"  - {{code: {diag.code}, reason: {json.dumps(REASON)}, "
                f"match: {json.dumps(message)}}}\n"
            )
            place, added = _suppress_text(lines, entry)
            title = f"Suppress {diag.code} here (suppress:)"
            actions.append(_action(title, diag, _edit(uri, place, added), False))
    return actions


def _action(
    title: str, diag: types.Diagnostic, edit: types.WorkspaceEdit, preferred: bool
) -> types.CodeAction:
    return types.CodeAction(
        title=title,
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diag],
        edit=edit,
        is_preferred=preferred,
    )


def _after_key(lines: list[str], key: str) -> int | None:
    return next((i + 1 for i, text in enumerate(lines) if text.startswith(f"{key}:")), None)


def _binding_text(lines: list[str], local: str, wire: str) -> tuple[types.Range, str]:
    entry = f"  - local: {json.dumps(local)}\n    wire: {json.dumps(wire)}\n"
    line = _after_key(lines, "bindings")
    if line is not None and lines[line - 1].strip() == "bindings:":
        at = types.Position(line=line, character=0)
        return types.Range(start=at, end=at), entry
    return _insert_at_end(lines, entry), _tail(lines) + "bindings:\n" + entry


def _suppress_text(lines: list[str], entry: str) -> tuple[types.Range, str]:
    line = _after_key(lines, "suppress")
    if line is not None and lines[line - 1].strip() == "suppress:":
        at = types.Position(line=line, character=0)
        return types.Range(start=at, end=at), entry
    return _insert_at_end(lines, entry), _tail(lines) + "suppress:\n" + entry


def _tail(lines: list[str]) -> str:
    """A newline first: the edit lands after the last line, which may lack one (a blank
    line in YAML is harmless when it had one)."""
    return "\n" if lines else ""


def symbols(data: dict[str, Any], smap: SourceMap, text: Text) -> list[types.DocumentSymbol]:
    """The outline: each stage of ``names``, each binding, and the policy."""
    out: list[types.DocumentSymbol] = []
    where = (smap, text)
    for index, stage in enumerate(data.get("names") or []):
        if isinstance(stage, dict):
            name = str(stage.get("id") or stage.get("kind") or index)
            out.append(
                _symbol(
                    f"stage {name}",
                    str(stage.get("kind", "")),
                    where,
                    ("names", index),
                    Kind_S.Namespace,
                )
            )
    for index, bound in enumerate(data.get("bindings") or []):
        if isinstance(bound, dict):
            label = f"{bound.get('local')} -> {bound.get('wire')}"
            out.append(_symbol(label, "binding", where, ("bindings", index), Kind_S.Function))
    if "policy" in data:
        out.append(_symbol("policy", "policy", where, ("policy",), Kind_S.Object))
    return out


Kind_S = types.SymbolKind


def _symbol(
    name: str,
    detail: str,
    where: tuple[SourceMap, Text],
    path: tuple[str | int, ...],
    kind: types.SymbolKind,
) -> types.DocumentSymbol:
    smap, text = where
    span = smap.key_span(path)
    at = word_range(text, span.line - 1, span.col - 1)
    return types.DocumentSymbol(name=name, detail=detail, kind=kind, range=at, selection_range=at)
