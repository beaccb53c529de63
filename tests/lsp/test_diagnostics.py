"""Diagnostics as you type are exactly ``lint --format json``'s findings.

The oracle is the ``bridge-rules lint`` command run as a separate process on the same files
on disk: the server must publish the same codes, severities, messages (with the hint, as
lint prints it) and positions, for every fixture lint's own tests use.
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
from tests.lsp.helpers import at, open_file, published, replace

from bridge_rules.resources import display_root

SEVERITY = {
    types.DiagnosticSeverity.Error: "error",
    types.DiagnosticSeverity.Warning: "warning",
    types.DiagnosticSeverity.Information: "info",
}


def _lint_json(project: Path, files: list[str]) -> list[dict[str, object]]:
    cmd = [str(Path(sys.executable).parent / "bridge-rules"), "lint", "--format", "json", *files]
    done = subprocess.run(
        cmd, cwd=project, capture_output=True, text=True, env=dict(os.environ), check=False
    )
    assert done.returncode in (0, 1), done.stderr
    found: list[dict[str, object]] = json.loads(done.stdout)["diagnostics"]
    return found


def _as_lint(file: str, diag: types.Diagnostic, project: Path) -> dict[str, object]:
    return {
        "file": file,
        "line": diag.range.start.line + 1,
        "col": diag.range.start.character + 1,
        "code": diag.code,
        "severity": SEVERITY[diag.severity] if diag.severity else None,
        "message": diag.message,
        "related": [
            {
                "message": note.message,
                "file": _shown(note.location.uri, project),
                "line": note.location.range.start.line + 1,
                "col": note.location.range.start.character + 1,
            }
            for note in diag.related_information or []
        ],
    }


def _shown(uri: str, project: Path) -> str:
    """A file as lint names it: relative to the project, or a packaged one to its root."""
    path = Path(unquote(urlparse(uri).path))
    root = project if path.is_relative_to(project) else display_root()
    return path.relative_to(root).as_posix()


def _key(found: dict[str, object]) -> tuple[str, ...]:
    keys = ("file", "line", "col", "code", "severity", "message", "related")
    return tuple(str(found[k]) for k in keys)


async def test_every_lint_fixture_as_lint_reports_it(client: LanguageClient, project: Path) -> None:
    names = sorted(p.name for p in project.glob("*.yaml"))
    for name in names:
        await open_file(client, project / name)
    expected = sorted(
        _key(
            {
                **d,
                "message": f"{d['message']}; {d['hint']}" if d.get("hint") else d["message"],
            }
        )
        for d in _lint_json(project, names)
    )
    got = sorted(
        _key(_as_lint(name, d, project))
        for name in names
        for d in client.diagnostics.get((project / name).as_uri(), [])
    )
    assert expected, "the fixtures hold findings"
    assert got == expected


async def test_a_finding_carries_its_code_link_and_lint_data(
    client: LanguageClient, project: Path
) -> None:
    uri = await open_file(client, project / "br301-fail.yaml")
    first = sorted(
        client.diagnostics[uri], key=lambda d: (d.range.start.line, d.range.start.character)
    )[0]
    assert first.code == "BR301"
    assert first.code_description is not None
    assert first.code_description.href.endswith("#checks-br301")
    assert first.data["code"] == "BR301"
    # The range covers the name written there, as the user typed it.
    assert first.range.end.character - first.range.start.character == len("TaskOutput")


async def test_edits_are_checked_unsaved(client: LanguageClient, project: Path) -> None:
    path = project / "br301-fail.yaml"
    uri = await open_file(client, path)
    assert any(d.code == "BR301" for d in client.diagnostics[uri])
    fixed = (project / "br301-pass.yaml").read_text(encoding="utf-8")
    assert list(await replace(client, uri, fixed, 2)) == []
    # The file on disk is untouched; lint of it still finds what the buffer no longer has.
    assert _lint_json(project, ["br301-fail.yaml"])


async def test_a_file_broken_mid_edit(client: LanguageClient, project: Path) -> None:
    path = project / "br301-fail.yaml"
    uri = await open_file(client, path)
    text = path.read_text(encoding="utf-8")
    broken = text.replace("names:\n", "names: [\n", 1)
    diags = await replace(client, uri, broken, 2)
    assert [d.code for d in diags] == ["BR003"]  # lint's YAML syntax error, located
    # Hover still answers from the last analysis that compiled.
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=at(4, 13))
    )
    assert hover is not None
    assert "Read -> Read" in hover.contents.value  # type: ignore[union-attr]
    diags = await replace(client, uri, text, 3)
    assert {d.code for d in diags} == {"BR301"}


async def test_a_change_to_a_base_rechecks_the_files_that_extend_it(
    client: LanguageClient, project: Path
) -> None:
    base = project / "base.yaml"
    base.write_text("bridge-rules: 1\npin: claude-code@2.1.330\n", encoding="utf-8")
    child = project / "child.yaml"
    child.write_text(
        "bridge-rules: 1\nextends: base.yaml\nnames:\n  - kind: canonical\n    names: [Read]\n",
        encoding="utf-8",
    )
    child_uri = await open_file(client, child)
    assert list(client.diagnostics[child_uri]) == []
    base_uri = await open_file(client, base)
    # The base now renames onto a name the pin lacks: the child's check finds it in the
    # base, through its extends, as lint would (the oracle: lint of the saved files).
    broken = (
        "bridge-rules: 1\npin: claude-code@2.1.330\n"
        "names:\n  - kind: canonical\n    names: [Webfetch]\n"
    )
    await replace(client, base_uri, broken, 2, wait=[child_uri])
    base.write_text(broken, encoding="utf-8")
    expected = {(d["code"], d["line"]) for d in _lint_json(project, ["child.yaml"])}
    got = {(d.code, d.range.start.line + 1) for d in client.diagnostics[base_uri]}
    assert expected == {("BR301", 5)}
    assert got == expected


async def test_closing_a_file_lint_would_not_find_clears_it(
    client: LanguageClient, project: Path
) -> None:
    """The fixtures at the project's root are not where a bare lint looks: each is checked
    while open, as `lint FILE` would, and its findings go when it is closed (nothing would
    update them after)."""
    path = project / "br301-fail.yaml"
    uri = await open_file(client, path)
    assert client.diagnostics[uri]
    assert (
        "br301-fail.yaml"
        not in subprocess.run(
            [str(Path(sys.executable).parent / "bridge-rules"), "lint", "-v"],
            cwd=project,
            capture_output=True,
            text=True,
            check=False,
        ).stderr
    )
    client.diagnostics.pop(uri)
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert list(await published(client, uri)) == []
