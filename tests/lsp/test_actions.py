"""Applying a quick fix never creates a finding.

Every code action the server offers, for every finding of every lint fixture and of files
written the ways YAML allows a list to be written, is applied by this test (slicing the line
by UTF-16 units, the protocol's default) and the result linted by ``bridge-rules lint
--format json`` in its own process: its findings must be a subset of the original file's,
without the one the action answered. The YAML a fix writes is read back by ruamel, the YAML
implementation the loader uses, as the exact text it was meant to hold.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities
from ruamel.yaml import YAML
from tests.lsp.conftest import COMMAND, started
from tests.lsp.helpers import open_file

from bridge_rules.lsp.insert import add_entry, yaml_quoted
from bridge_rules.lsp.text import Text

COLLIDE = "bridge-rules: 1\npin: claude-code@2.1.330\nnames:\n  - kind: aliases\n"
CRAFTED = {
    # A suppress: list whose items are not indented (YAML allows it).
    "flush.yaml": COLLIDE + "    map: {find: Glob, ls: Glob}\nsuppress:\n"
    "- {code: BR304, reason: kept on purpose}\n",
    # A flow list on the key's own line, and one that is empty.
    "flow.yaml": COLLIDE + "    map: {find: Glob, ls: Glob}\n"
    "suppress: [{code: BR304, reason: kept on purpose}]\n",
    "empty.yaml": COLLIDE + "    map: {find: Glob, ls: Glob}\nsuppress: []  # none yet\n",
    # No line break at the end of the file.
    "unended.yaml": COLLIDE + "    map: {find: Glob, ls: Glob}",
    # The list's key quoted: a second suppress: at the end would be a duplicate key.
    "quoted.yaml": COLLIDE + '    map: {find: Glob, ls: Glob}\n"suppress": []  # none yet\n',
    # A message holding an emoji, a quote and a backslash: the match: must read back as it.
    "emoji.yaml": COLLIDE + '    map: {"l\U0001f600\\"q\\\\": Glob, find: Glob}\n',
    # A misspelt key, and a quoted pin that does not exist: each "did you mean" replaces it.
    "typo.yaml": "bridge-rules: 1\npin: claude-code@2.1.330\nnames:\n  - kind: canonical\n"
    "    nmes: [Read]\n",
    "pin.yaml": 'bridge-rules: 1\npin: "claude-code@2.1.33"\n',
    # An unbound tool next to a flow list of bindings.
    "bound.yaml": "bridge-rules: 1\npin: claude-code@2.1.330\nlocal_pin: pi@0.73.1\n"
    "names:\n  - {kind: aliases, map: {write: Write}}\nbindings: []\n",
}
Finding = tuple[str, str, str]


def _offset(text: str, position: types.Position) -> int:
    """A client position (UTF-16 units) as an index into ``text``: the oracle's own count."""
    lines = text.split("\n")
    if position.line >= len(lines):
        return len(text)
    before = sum(len(line) + 1 for line in lines[: position.line])
    units = lines[position.line].encode("utf-16-le")[: position.character * 2]
    return before + len(units.decode("utf-16-le"))


def _apply(text: str, edits: list[types.TextEdit]) -> str:
    spans = [(_offset(text, e.range.start), _offset(text, e.range.end), e.new_text) for e in edits]
    for start, end, new in sorted(spans, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def _edits(action: types.CodeAction, uri: str) -> list[types.TextEdit]:
    assert action.edit is not None
    if action.edit.changes is not None:
        return list(action.edit.changes[uri])
    found = []
    for change in action.edit.document_changes or []:
        assert isinstance(change, types.TextDocumentEdit)
        assert change.text_document.uri == uri
        found += [e for e in change.edits if isinstance(e, types.TextEdit)]
    return found


def _lint(project: Path, names: list[str]) -> dict[str, Counter[Finding]]:
    done = subprocess.run(
        [COMMAND[0], "lint", "--format", "json", *names],
        cwd=project,
        capture_output=True,
        text=True,
        env=dict(os.environ),
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    found: dict[str, Counter[Finding]] = {name: Counter() for name in names}
    for d in json.loads(done.stdout)["diagnostics"]:
        found[d["file"]][(d["code"], d["severity"], d["message"])] += 1
    return found


def _answered(diag: types.Diagnostic) -> Finding:
    data = diag.data
    assert isinstance(data, dict)
    return (str(data["code"]), str(data["severity"]), str(data["message"]))


async def _offered(
    client: LanguageClient, uri: str, diag: types.Diagnostic
) -> list[types.CodeAction]:
    found = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diag.range,
            context=types.CodeActionContext(diagnostics=[diag]),
        )
    )
    assert all(isinstance(a, types.CodeAction) for a in found or [])
    return [a for a in found or [] if isinstance(a, types.CodeAction)]


async def test_no_quick_fix_creates_a_finding(client: LanguageClient, project: Path) -> None:
    for name, text in CRAFTED.items():
        (project / name).write_text(text, encoding="utf-8")
    names = sorted(p.name for p in project.glob("*.yaml"))
    variants: list[tuple[str, str, Finding, str]] = []
    for name in names:
        path = project / name
        uri = await open_file(client, path)
        original = path.read_text(encoding="utf-8")
        for diag in client.diagnostics[uri]:
            for action in await _offered(client, uri, diag):
                variant = f"{path.stem}--fix{len(variants)}.yaml"
                (project / variant).write_text(_apply(original, _edits(action, uri)), "utf-8")
                variants.append((variant, name, _answered(diag), action.title))
    kinds = Counter(title.split()[0] for *_, title in variants)
    assert set(kinds) == {"Replace", "Add", "Suppress"}, kinds
    offered_in = {name for _, name, *_ in variants}
    assert set(CRAFTED) <= offered_in, set(CRAFTED) - offered_in  # each gets a fix
    found = _lint(project, names + [variant for variant, *_ in variants])
    for variant, name, answered, title in variants:
        before = found[name]
        after = Counter(
            {(c, s, m.replace(variant, name)): n for (c, s, m), n in found[variant].items()}
        )
        assert not after - before, f"{title!r} on {name} adds {sorted(after - before)}"
        assert after[answered] < before[answered], f"{title!r} on {name} leaves {answered}"


def _expand(snippet: str) -> tuple[str, list[str]]:
    """A snippet's text with each placeholder at its default, and the defaults (the LSP
    snippet grammar: ``${1:default}``, ``\\`` escaping ``$``, ``}`` and ``\\``)."""
    defaults: list[str] = []

    def default(found: re.Match[str]) -> str:
        defaults.append(found.group(1))
        return found.group(1)

    plain = re.sub(r"(?<!\\)\$\{1:((?:\\.|[^\\}])*)\}", default, snippet)
    unescape = re.compile(r"\\([\\$}])")
    return unescape.sub(r"\1", plain), [unescape.sub(r"\1", d) for d in defaults]


async def test_with_snippets_the_reason_is_for_the_author_to_type(project: Path) -> None:
    caps = client_capabilities("visual-studio-code")
    assert caps.workspace is not None
    caps.workspace.workspace_edit = types.WorkspaceEditClientCapabilities(
        document_changes=True, snippet_edit_support=True
    )
    client, _ = await started(project, caps)
    try:
        path = project / "emoji.yaml"
        path.write_text(CRAFTED["emoji.yaml"], encoding="utf-8")
        uri = await open_file(client, path)
        (diag,) = [d for d in client.diagnostics[uri] if d.code == "BR203"]
        (action,) = [a for a in await _offered(client, uri, diag) if a.title.startswith("Suppress")]
        assert action.edit is not None
        (change,) = action.edit.document_changes or []
        assert isinstance(change, types.TextDocumentEdit)
        (edit,) = change.edits
        assert isinstance(edit, types.SnippetTextEdit)
        text, defaults = _expand(edit.snippet.value)
        assert defaults == ["say why this is intended"]  # the reason, selected for typing over
        fixed = _apply(path.read_text(encoding="utf-8"), [types.TextEdit(edit.range, text)])
        (project / "typed.yaml").write_text(fixed.replace(defaults[0], "a reason"), "utf-8")
        found = _lint(project, ["emoji.yaml", "typed.yaml"])
        assert found["typed.yaml"] == found["emoji.yaml"] - Counter([_answered(diag)])
    finally:
        await client.shutdown_session()
        await client.stop()


@given(st.text())
def test_a_written_string_reads_back_as_itself(text: str) -> None:
    loaded = YAML(typ="safe").load(io.StringIO(f"key: {yaml_quoted(text)}\n"))
    assert loaded == {"key": text}


ENTRY = "{code: BR304, reason: kept}"
ADDED = {"code": "BR304", "reason": "kept"}
HEAD = "bridge-rules: 1\n"


@pytest.mark.parametrize(
    ("text", "fixed"),
    [
        (HEAD, True),
        (HEAD + '"suppress": []\n', True),
        (HEAD + "'suppress':\n- {code: BR1, reason: r}\n", True),
        (HEAD + "suppress :\n  - {code: BR1, reason: r}\n", True),
        (HEAD + '"suppress": [{code: BR1, reason: r}]  # x\n', True),
        ("{bridge-rules: 1, suppress: []}\n", False),
        ("{bridge-rules: 1}\n", False),
        (HEAD + "? suppress\n: []\n", False),
        ("  bridge-rules: 1\n  names: []\n", False),
        (HEAD + '"\\u0073uppress": []\n', False),
    ],
)
def test_an_entry_goes_into_the_list_the_loader_reads(text: str, fixed: bool) -> None:
    """However the list's key is written, the edit adds to that list or offers nothing:
    read back by ruamel (which refuses a duplicate key), the file is what it was plus the
    entry, in the list. Found reading the quick fixes from the author's side:
    ``"suppress": []`` got a second ``suppress:`` at the end, a duplicate key."""
    found = add_entry(Text(text), "suppress", ENTRY)
    assert (found is not None) == fixed
    if found is None:
        return
    where, new = found
    before = YAML(typ="safe").load(io.StringIO(text))
    after = YAML(typ="safe").load(io.StringIO(_apply(text, [types.TextEdit(where, new)])))
    listed = after.pop("suppress")  # the entry goes first in a block list, last in a flow one
    expected = [*(before.pop("suppress", None) or []), ADDED]
    assert sorted(map(repr, listed)) == sorted(map(repr, expected))
    assert after == before
