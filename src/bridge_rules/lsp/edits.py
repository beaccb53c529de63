"""Completion, quick fixes and the outline of a rule file.

Completion offers what a JSON Schema cannot know: the pinned tools and their fields, the
operations of the rule format with their fields, the policy switches the rules define, the
schema targets and the packaged profiles. Quick fixes only apply what ``lint`` computed:
a "did you mean" it printed, the binding its hint names, a ``suppress:`` entry (the rule
format's own way to silence a finding in the file that declares it).
"""

from __future__ import annotations

import re
from typing import Any

from lsprotocol import types

from bridge_rules.lint.analysis import UNUSED_SUPPRESSION
from bridge_rules.lsp.convert import quoted, token_on, word_range
from bridge_rules.lsp.insert import add_entry, yaml_quoted
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


def _snippet(
    doc: types.OptionalVersionedTextDocumentIdentifier, at: types.Range, text: str
) -> types.WorkspaceEdit:
    """An interactive edit (LSP 3.18): the reason selected, for the author to type over."""
    escaped = re.sub(r"([\\$}])", r"\\\1", text)
    reason = re.sub(r"([\\$}])", r"\\\1", REASON)
    snippet = escaped.replace(reason, "${1:" + reason + "}", 1)
    edit = types.SnippetTextEdit(range=at, snippet=types.StringValue(value=snippet))
    change = types.TextDocumentEdit(text_document=doc, edits=[edit])
    return types.WorkspaceEdit(document_changes=[change])


def code_actions(
    doc: types.OptionalVersionedTextDocumentIdentifier,
    shown: str,
    text: Text,
    diagnostics: list[types.Diagnostic],
    snippets: bool = False,
) -> list[types.CodeAction]:
    """Quick fixes for the findings in the request's range; each from the finding itself.
    ``snippets``: the client takes snippet edits, so a suppression's reason is a placeholder
    the author types over; otherwise it is written out (a valid reason: lint stays clean)."""
    actions: list[types.CodeAction] = []
    uri, lines = doc.uri, text.lines
    for diag in diagnostics:
        data: Any = diag.data if isinstance(diag.data, dict) else {}
        message = str(data.get("message", diag.message))
        hint = str(data.get("hint") or "")
        fix = _DID_YOU_MEAN.search(message) or _DID_YOU_MEAN.search(hint)
        names = quoted(message)
        subject = token_on(text, diag.range.start.line, names[0]) if fix and names else None
        if fix and subject is not None:
            # The name the finding is about (its message's first quote), which may not be
            # the one it is placed on ("target 'Skills' of 'skill'" sits on 'skill').
            line = lines[subject.start.line]
            written = line[text.column(subject.start) : text.column(subject.end)]
            name = fix.group(1)
            new = yaml_quoted(name) if written[:1] in "'\"" else name
            title = f"Replace '{written}' with '{name}'"
            actions.append(_action(title, diag, _edit(uri, subject, new), True))
        bind = _BIND.search(hint)
        if bind:
            local, wire = bind.groups()
            entry = f"{{local: {yaml_quoted(local)}, wire: {yaml_quoted(wire)}}}"
            added = add_entry(text, "bindings", entry)
            if added is not None:
                title = f"Add a binding for '{local}'"
                actions.append(_action(title, diag, _edit(uri, *added), False))
        if not _suppressible(diag, data, shown):
            continue
        entry = (
            f"{{code: {diag.code}, reason: {yaml_quoted(REASON)}, match: {yaml_quoted(message)}}}"
        )
        found = add_entry(text, "suppress", entry)
        if found is not None:
            edit = _snippet(doc, *found) if snippets else _edit(uri, *found)
            actions.append(_action(f"Suppress {diag.code} here (suppress:)", diag, edit, False))
    return actions


def _suppressible(diag: types.Diagnostic, data: Any, shown: str) -> bool:
    """A warning in this file that a ``suppress:`` entry here would silence: not an unused
    suppression (BR308, which no entry silences), nor a profile's finding placed on the
    ``extends:`` line (:func:`bridge_rules.compose.placed`), which an entry here cannot
    match since it is matched where it arose."""
    return (
        diag.severity == types.DiagnosticSeverity.Warning
        and data.get("file") == shown
        and diag.code != UNUSED_SUPPRESSION
        and not str(data.get("message", "")).startswith("in profile '")
    )


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
