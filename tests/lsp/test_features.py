"""Hover, definition, completion, code actions and the outline, over stdio.

Oracles: ``bridge-rules explain`` and ``bridge-rules codes`` run as separate processes
(hover must contain their output verbatim), lint's own "decided by" notes in the fixtures'
expected reports (definition), the pin files read as JSON (completion, field hover), and
``bridge-rules lint`` of the file after a quick fix is applied (code actions).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pytest_lsp import LanguageClient
from tests.lsp.helpers import at, open_file, replace

from bridge_rules.resources import rules_dir

CLI = str(Path(sys.executable).parent / "bridge-rules")


def _run(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CLI, *args], cwd=project, capture_output=True, text=True, env=dict(os.environ), check=False
    )


def _doc(uri: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri)


async def _hover(client: LanguageClient, uri: str, line: int, col: int) -> str:
    found = await client.text_document_hover_async(
        types.HoverParams(text_document=_doc(uri), position=at(line, col))
    )
    assert found is not None
    assert isinstance(found.contents, types.MarkupContent)
    return found.contents.value


async def test_hover_on_a_tool_is_explain(client: LanguageClient, project: Path) -> None:
    uri = await open_file(client, project / "br303-fail.yaml")
    explained = _run(project, "explain", "find", "--rules", "br303-fail.yaml")
    assert explained.returncode == 0, explained.stderr
    text = await _hover(client, uri, 8, 11)  # `find` in `map: {find: Glob}`
    assert explained.stdout in text
    assert f"({(project / 'br303-fail.yaml').as_uri()}#L9)" in text  # the deciding rule


async def test_hover_on_a_wire_name_explains_its_local_tool(
    client: LanguageClient, project: Path
) -> None:
    uri = await open_file(client, project / "br303-fail.yaml")
    text = await _hover(client, uri, 8, 18)  # `Glob`: the wire name of `find`
    assert "find -> Glob" in text


async def test_hover_on_a_binding_and_a_policy_entry_is_explain(
    client: LanguageClient, project: Path
) -> None:
    # A binding's local that no stage names: traced as `explain --any` traces it.
    uri = await open_file(client, project / "br301-pass.yaml")
    explained = _run(project, "explain", "stop_task", "--any", "--rules", "br301-pass.yaml")
    assert explained.returncode == 0, explained.stderr
    assert explained.stdout in await _hover(client, uri, 8, 12)  # `local: stop_task`
    # A local name in the policy, decided in the packaged profile it extends.
    uri = await open_file(client, project / "br318-pass.yaml")
    explained = _run(project, "explain", "write", "--rules", "br318-pass.yaml")
    assert explained.returncode == 0, explained.stderr
    assert explained.stdout in await _hover(client, uri, 4, 18)  # `write` in `deny:`


async def test_hover_on_a_code_is_its_documentation(client: LanguageClient, project: Path) -> None:
    path = project / "suppressing.yaml"
    path.write_text(
        "bridge-rules: 1\npin: claude-code@2.1.330\nsuppress:\n  - {code: BR303}\n",
        encoding="utf-8",
    )
    uri = await open_file(client, path)
    text = await _hover(client, uri, 3, 12)
    codes = _run(project, "codes", "BR303").stdout
    title = codes.splitlines()[0].split(": ", 1)[1]
    assert "**BR303** (warning)" in text
    assert title in text


async def test_hover_on_an_argument_field_is_the_pins(
    client: LanguageClient, project: Path
) -> None:
    path = project / "fields.yaml"
    path.write_text(
        "bridge-rules: 1\npin: claude-code@2.1.330\nbindings:\n  - local: read\n    wire: Read\n"
        "    input:\n      - rename: {path: file_path}\n",
        encoding="utf-8",
    )
    uri = await open_file(client, path)
    pin = json.loads(
        (Path(__file__).resolve().parents[2] / "schemas/claude-code/2.1.330.json").read_text()
    )
    field = pin["tools"]["Read"]["properties"]["file_path"]
    text = await _hover(client, uri, 6, 27)
    assert f"`{field['type']}`" in text
    assert field["description"] in text


async def _definition(client: LanguageClient, uri: str, line: int, col: int) -> types.Location:
    found = await client.text_document_definition_async(
        types.DefinitionParams(text_document=_doc(uri), position=at(line, col))
    )
    assert isinstance(found, types.Location), found
    return found


def _path(location: types.Location) -> Path:
    return Path(unquote(urlparse(location.uri).path))


async def test_definition_of_a_name_is_the_deciding_rule(
    client: LanguageClient, project: Path
) -> None:
    uri = await open_file(client, project / "br303-fail.yaml")
    # lint's own note for this entry: "br303-fail.yaml:9:11: note: decided by aliases 'find: Glob'"
    expected = project / "br303-fail.yaml.expected" if False else project / "br303-fail.expected"
    note = next(line for line in expected.read_text().splitlines() if "decided by aliases" in line)
    line, col = (int(n) for n in note.strip().split(":")[1:3])
    found = await _definition(client, uri, 12, 11)  # `FIND` in stage 'second'
    assert _path(found) == project / "br303-fail.yaml"
    assert (found.range.start.line + 1, found.range.start.character + 1) == (line, col)


async def test_definition_crosses_extends_into_packaged_profiles(
    client: LanguageClient, project: Path
) -> None:
    uri = await open_file(client, project / "br318-pass.yaml")
    found = await _definition(client, uri, 5, 11)  # `read` in `allow: [read, ...]`
    assert _path(found) == (rules_dir() / "default.yaml").resolve()
    decided = _run(project, "explain", "read", "--rules", "br318-pass.yaml").stdout
    assert f"[rules/default.yaml:{found.range.start.line + 1}:" in decided
    profile = await _definition(client, uri, 1, 10)  # `default` in `extends: default`
    assert _path(profile) == (rules_dir() / "default.yaml").resolve()


async def test_definition_of_a_binding_wire_is_the_pinned_schema(
    client: LanguageClient, project: Path
) -> None:
    uri = await open_file(client, project / "br301-pass.yaml")
    found = await _definition(client, uri, 9, 11)  # `wire: TaskStop`
    pin = _path(found)
    assert pin.name == "2.1.330.json"
    line = pin.read_text().splitlines()[found.range.start.line]
    assert '"TaskStop"' in line
    assert "TaskStop" in json.loads(pin.read_text())["tools"]


async def test_completion_offers_the_pins_tools_and_fields(
    client: LanguageClient, project: Path
) -> None:
    uri = await open_file(client, project / "br318-pass.yaml")
    found = await client.text_document_completion_async(
        types.CompletionParams(text_document=_doc(uri), position=at(5, 10))
    )
    assert isinstance(found, types.CompletionList)
    labels = {item.label: item for item in found.items}
    pin = json.loads(
        (Path(__file__).resolve().parents[2] / "schemas/claude-code/2.1.330.json").read_text()
    )
    assert set(pin["tools"]) <= set(labels)
    assert "file_path" in labels
    assert {"rename", "wrap", "default"} <= set(labels)  # operations
    assert labels["rename"].detail == "rename: ..."
    assert {"anthropic", "openai-strict", "default", "capabilities"} <= set(labels)
    assert all(
        item.kind == types.CompletionItemKind.Class
        for item in found.items
        if item.label in pin["tools"] and item.label != "default"
    )


async def _actions(client: LanguageClient, uri: str, code: str) -> list[types.CodeAction]:
    diags = [d for d in client.diagnostics[uri] if d.code == code]
    assert diags
    found = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=_doc(uri),
            range=diags[0].range,
            context=types.CodeActionContext(diagnostics=diags),
        )
    )
    assert found is not None
    return [a for a in found if isinstance(a, types.CodeAction)]


def _apply(text: str, edit: types.WorkspaceEdit, uri: str) -> str:
    assert edit.changes is not None
    lines = text.splitlines(keepends=True)
    for change in sorted(
        edit.changes[uri], key=lambda e: (e.range.start.line, e.range.start.character), reverse=True
    ):
        start, end = change.range.start, change.range.end
        lines += [""] * (max(start.line, end.line) + 1 - len(lines))
        head = "".join(lines[: start.line]) + lines[start.line][: start.character]
        tail = lines[end.line][end.character :] + "".join(lines[end.line + 1 :])
        lines = (head + change.new_text + tail).splitlines(keepends=True)
    return "".join(lines)


async def _fix(client: LanguageClient, project: Path, name: str, code: str, title: str) -> str:
    path = project / name
    uri = await open_file(client, path)
    action = next(a for a in await _actions(client, uri, code) if a.title.startswith(title))
    assert action.edit is not None
    fixed = _apply(path.read_text(encoding="utf-8"), action.edit, uri)
    path.write_text(fixed, encoding="utf-8")
    diags = await replace(client, uri, fixed, 2)
    assert sorted(d.message for d in diags) == sorted(
        f"{d['message']}; {d['hint']}" if d["hint"] else d["message"]
        for d in json.loads(_run(project, "lint", "--format", "json", name).stdout)["diagnostics"]
    )
    return fixed


async def test_did_you_mean_is_a_quick_fix(client: LanguageClient, project: Path) -> None:
    fixed = await _fix(client, project, "br301-fail.yaml", "BR301", "Replace 'Webfetch'")
    assert "WebFetch" in fixed
    assert "Webfetch" not in fixed
    lint = _run(project, "lint", "br301-fail.yaml").stdout
    assert "Webfetch" not in lint
    assert "KillShell" in lint


async def test_an_unbound_tool_gets_a_binding(client: LanguageClient, project: Path) -> None:
    fixed = await _fix(client, project, "br315-fail.yaml", "BR315", "Add a binding for 'write'")
    assert 'local: "write"' in fixed
    assert 'wire: "Write"' in fixed
    assert "BR315" not in _run(project, "lint", "br315-fail.yaml").stdout


async def test_a_warning_can_be_suppressed(client: LanguageClient, project: Path) -> None:
    await _fix(client, project, "br303-fail.yaml", "BR303", "Suppress BR303")
    lint = _run(project, "lint", "br303-fail.yaml")
    assert lint.stdout.count("BR303") == 1  # one of the two, the one the action named
    assert "BR308" not in lint.stdout


async def test_the_outline_lists_stages_bindings_and_policy(
    client: LanguageClient, project: Path
) -> None:
    uri = await open_file(client, project / "br301-pass.yaml")
    found = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=_doc(uri))
    )
    assert found is not None
    names = [s.name for s in found if isinstance(s, types.DocumentSymbol)]
    assert names == ["stage canonical", "stage aliases", "stop_task -> TaskStop"]
    uri = await open_file(client, project / "br318-pass.yaml")
    found = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=_doc(uri))
    )
    assert [s.name for s in found or []] == ["policy"]
