"""``bridge-rules lsp``: the rule files of a project, checked as you type, over stdio.

pygls speaks the protocol; :class:`~bridge_rules.lsp.workspace.Workspace` decides what to
check and runs ``lint``'s own analysis; :mod:`~bridge_rules.lsp.navigate` and
:mod:`~bridge_rules.lsp.edits` answer from the last analysis that compiled, so hover and
completion keep working while a file is broken mid-edit. Only this package imports pygls,
and only ``bridge-rules lsp`` imports this package.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from bridge_rules.diagnostics import Diagnostic
from bridge_rules.lsp import edits, navigate
from bridge_rules.lsp.convert import TextOf, to_lsp, word_at
from bridge_rules.lsp.text import UTF16, Text
from bridge_rules.lsp.workspace import Workspace, absolute
from bridge_rules.runtime import Runtime
from bridge_rules.version import __version__

WATCHED = ("**/*.yaml", "**/*.yml", "**/pyproject.toml", "**/.bridge-rules/pins/*.json")
"""What the server asks an editor to report changes of: rule files, the pyproject table that
lists them, and the project's pins (lint reads all three from disk)."""
_TOOL_KEY = re.compile(r"^\s*-?\s*(?:local|wire):\s*['\"]?([^\s'\"]+)")


def path_of(uri: str) -> str:
    return os.path.abspath(unquote(urlparse(uri).path))


class RulesServer(LanguageServer):
    """A pygls server holding one :class:`Workspace`."""

    def __init__(self) -> None:
        # Whole texts on each change: pygls applies an incremental change to lines split by
        # str.splitlines, which also breaks at \x0c, \x85 or \u2028, where the client does not.
        super().__init__(
            "bridge-rules", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Full
        )
        self.rules = Workspace(Path.cwd())
        self.told: str | None = None

    def text(self, path: str) -> Text:
        """A file as the editor has it (its buffer, else what is on disk), positions in the
        encoding agreed with the client."""
        text = self.rules.texts.get(path)
        if text is None:
            try:
                text = Path(path).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                text = ""
        return Text(text, str(self.workspace.position_encoding or UTF16))

    def text_of(self, shown: str) -> tuple[str, Text]:
        """A file as a finding or a trace names it: its absolute path and its text."""
        path = self.rules.on_disk(shown)
        return path, self.text(path)

    def runtime(self, path: str) -> Runtime | None:
        found = self.rules.analysis_for(path)
        return found.runtime if found is not None else None

    def check(self, path: str | None) -> None:
        """``path`` changed (None: anything may have); publish what that changes."""
        found = self.rules.check(path)
        self.tell(self.rules.problem)
        read: dict[str, tuple[str, Text]] = {}

        def text_of(shown: str) -> tuple[str, Text]:
            """Each file read once per check, however many notes point into it."""
            if shown not in read:
                read[shown] = self.text_of(shown)
            return read[shown]

        for file, diags in sorted(found.items()):
            self.publish(file, diags, text_of)

    def tell(self, problem: str | None) -> None:
        """Say once, as ``lint`` says it before exiting 2, that ``[tool.bridge-rules]`` cannot
        be used (the server then checks the open rule files alone)."""
        if problem is not None and problem != self.told:
            message = f"bridge-rules: error: {problem}"
            self.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Error, message=message)
            )
        self.told = problem

    def publish(self, file: str, diags: list[Diagnostic], text_of: TextOf) -> None:
        text = self.text(file)
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=Path(file).as_uri(), diagnostics=[to_lsp(d, text, text_of) for d in diags]
            )
        )


server = RulesServer()


@server.feature(types.INITIALIZED)
def _initialized(ls: RulesServer, params: types.InitializedParams) -> None:
    folders = ls.workspace.folders
    root = ls.workspace.root_path or (
        path_of(next(iter(folders.values())).uri) if folders else None
    )
    if root:
        ls.rules = Workspace(Path(root))
        os.chdir(root)  # spans are shown relative to the project, as `lint` at its root shows them
    watching = ls.client_capabilities.workspace
    changes = watching.did_change_watched_files if watching is not None else None
    if changes is not None and changes.dynamic_registration:
        watchers = [types.FileSystemWatcher(glob_pattern=glob) for glob in WATCHED]
        ls.client_register_capability(
            types.RegistrationParams(
                registrations=[
                    types.Registration(
                        id="bridge-rules-files",
                        method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                        register_options=types.DidChangeWatchedFilesRegistrationOptions(
                            watchers=watchers
                        ),
                    )
                ]
            )
        )


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def _opened(ls: RulesServer, params: types.DidOpenTextDocumentParams) -> None:
    path = path_of(params.text_document.uri)
    ls.rules.texts[path] = params.text_document.text
    ls.check(path)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def _changed(ls: RulesServer, params: types.DidChangeTextDocumentParams) -> None:
    uri = params.text_document.uri
    path = path_of(uri)
    ls.rules.texts[path] = ls.workspace.get_text_document(uri).source
    ls.check(path)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def _saved(ls: RulesServer, params: types.DidSaveTextDocumentParams) -> None:
    ls.check(path_of(params.text_document.uri))


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def _closed(ls: RulesServer, params: types.DidCloseTextDocumentParams) -> None:
    path = path_of(params.text_document.uri)
    ls.rules.texts.pop(path, None)
    ls.check(path)  # back to what is on disk, for the files that extend it too


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def _watched(ls: RulesServer, params: types.DidChangeWatchedFilesParams) -> None:
    """A file changed on disk (a checkout, another tool): its rule sets are checked again;
    every rule set, when what decides them all changed (pyproject.toml, a project pin)."""
    paths = [path_of(change.uri) for change in params.changes]
    if any(Path(path).name == "pyproject.toml" or path.endswith(".json") for path in paths):
        ls.check(None)
        return
    for path in paths:
        ls.check(path)


@server.feature(types.TEXT_DOCUMENT_HOVER)
def _hover(ls: RulesServer, params: types.HoverParams) -> types.Hover | None:
    path = path_of(params.text_document.uri)
    lines = ls.text(path)
    found = word_at(lines, params.position)
    if found is None:
        return None
    word, at = found
    tool = _enclosing_tool(lines.lines, params.position.line)
    written = lines.lines[params.position.line]
    bound = re.search(rf"\blocal:\s*['\"]?{re.escape(word)}(?![\w.*@/-])", written)
    text = navigate.hover_text(ls.runtime(path), word, tool, bound is not None)
    if text is None:
        return None
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text), range=at
    )


def _enclosing_tool(lines: list[str], line: int) -> str | None:
    """The ``wire`` (else ``local``) of the binding around ``line``, for a field's hover."""
    for index in range(line, max(line - 40, -1), -1):
        hit = _TOOL_KEY.match(lines[index]) if index < len(lines) else None
        if hit:
            return hit.group(1)
    return None


@server.feature(types.TEXT_DOCUMENT_DEFINITION)
def _definition(ls: RulesServer, params: types.DefinitionParams) -> types.Location | None:
    path = path_of(params.text_document.uri)
    text = ls.text(path)
    found = word_at(text, params.position)
    if found is None:
        return None
    line = text.lines[params.position.line]
    return navigate.definition(ls.runtime(path), found[0], line, ls.text_of)


@server.feature(
    types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=[" ", "-", "{"])
)
def _complete(ls: RulesServer, params: types.CompletionParams) -> types.CompletionList:
    items = edits.completions(ls.runtime(path_of(params.text_document.uri)))
    return types.CompletionList(is_incomplete=False, items=items)


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
)
def _actions(ls: RulesServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    uri = params.text_document.uri
    path = path_of(uri)
    doc = types.OptionalVersionedTextDocumentIdentifier(
        uri=uri, version=ls.workspace.get_text_document(uri).version
    )
    edit = ls.client_capabilities.workspace
    changes = edit.workspace_edit if edit is not None else None
    snippets = bool(changes and changes.snippet_edit_support and changes.document_changes)
    return edits.code_actions(
        doc, ls.rules.shown_name(path), ls.text(path), list(params.context.diagnostics), snippets
    )


@server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
def _symbols(ls: RulesServer, params: types.DocumentSymbolParams) -> list[types.DocumentSymbol]:
    path = path_of(params.text_document.uri)
    rt = ls.runtime(path)
    if rt is None:
        return []
    for sourced in rt.rules.files:
        if absolute(sourced.doc.path) == path:
            return edits.symbols(sourced.doc.data, sourced.doc.source_map, ls.text(path))
    return []


def main() -> None:
    server.start_io()
