"""Positions in the units the client agreed to, whatever is written before the token.

LSP counts a column in UTF-16 code units unless the client offers UTF-8 or UTF-32 at
``initialize``; ``lint`` counts code points. Hypothesis writes random text (astral
characters included) before known tokens, and every range the server returns (the
diagnostic, hover, definition and the quick fix's edit) must select exactly that token when
the line is cut by an oracle written here: the line encoded in the agreed encoding, sliced by
that encoding's code-unit width, decoded. Positions sent to the server are computed the same
way.
"""

from __future__ import annotations

import itertools
import json
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities
from tests.budget import examples
from tests.lsp.conftest import COMMAND, started
from tests.lsp.helpers import open_file, replace

CODEC = {"utf-8": ("utf-8", 1), "utf-16": ("utf-16-le", 2), "utf-32": ("utf-32-le", 4)}


def units(text: str, encoding: str) -> int:
    codec, width = CODEC[encoding]
    return len(text.encode(codec)) // width


def cut(line: str, start: int, end: int, encoding: str) -> str:
    """``line[start:end]`` with ``start`` and ``end`` in code units of ``encoding``."""
    codec, width = CODEC[encoding]
    return line.encode(codec)[start * width : end * width].decode(codec)


@pytest_asyncio.fixture(params=["utf-16", "utf-8", "utf-32"])
async def agreed(
    request: pytest.FixtureRequest, project: Path
) -> AsyncIterator[tuple[LanguageClient, str]]:
    """A client that offers only one encoding (none at all for UTF-16, the default), and
    the encoding the server said it uses."""
    offered: str = request.param
    caps = client_capabilities("visual-studio-code")
    caps.general = types.GeneralClientCapabilities(
        position_encodings=None if offered == "utf-16" else [offered]
    )
    client, result = await started(project, caps)
    assert result.capabilities.position_encoding == offered
    sync = result.capabilities.text_document_sync
    assert isinstance(sync, types.TextDocumentSyncOptions)
    assert sync.change == types.TextDocumentSyncKind.Full
    yield client, offered
    await client.shutdown_session()
    await client.stop()


def rules(prefix: str) -> str:
    quoted = json.dumps(prefix, ensure_ascii=False)
    return (
        "bridge-rules: 1\npin: claude-code@2.1.330\nnames:\n  - kind: canonical\n"
        f"    names: [{quoted}, Webfetch]\n  - kind: aliases\n"
        f"    map: {{{quoted}: Read, find: Glob}}\n"
    )


WEBFETCH, FIND = 4, 6  # the lines of the two tokens
# Anything YAML reads in a double-quoted scalar on one line: no control characters, line or
# paragraph separators, surrogates, or BOM/non-characters (which YAML refuses).
PREFIX = st.text(
    st.characters(
        exclude_categories=("Cs", "Cc", "Zl", "Zp"), exclude_characters="\ufeff\ufffe\uffff"
    )
    | st.characters(min_codepoint=0x1F300, max_codepoint=0x1FAFF)  # emoji, astral
    | st.characters(min_codepoint=0x10000, max_codepoint=0x10FFFF, exclude_categories=("Cs",)),
    min_size=1,
    max_size=12,
).filter(lambda s: s not in {"Webfetch", "find", "Read"})


VERSIONS = itertools.count(2)
"""Document versions only have to grow; one count serves every document of the run."""


def _span(line: str, token: str, encoding: str) -> tuple[int, int]:
    """Where the last ``token`` of ``line`` is, in code units (the oracle's own count)."""
    before = line[: line.rindex(token)]
    return units(before, encoding), units(before + token, encoding)


@settings(
    max_examples=examples(20),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(prefix=PREFIX)
async def test_every_range_selects_its_token(
    agreed: tuple[LanguageClient, str], project: Path, prefix: str
) -> None:
    client, encoding = agreed
    path = project / "positions.yaml"  # one server for every example: opened once, then edited
    text = rules(prefix)
    lines = text.splitlines()
    uri = path.as_uri()
    if not path.exists():
        path.write_text(text, encoding="utf-8")
        await open_file(client, path)
    diags = await replace(client, uri, text, next(VERSIONS))

    # The diagnostic on 'Webfetch', after the prefix on its line.
    found = [d for d in diags if d.code == "BR301" and "'Webfetch'" in d.message]
    assert len(found) == 1, [d.message for d in diags]
    diag = found[0]
    assert diag.range.start.line == diag.range.end.line == WEBFETCH
    got = cut(lines[WEBFETCH], diag.range.start.character, diag.range.end.character, encoding)
    assert got == "Webfetch"
    assert (diag.range.start.character, diag.range.end.character) == _span(
        lines[WEBFETCH], "Webfetch", encoding
    )

    # Hover and definition on 'find' (the cursor inside it, in client units): both ranges
    # select 'find'; the definition is the aliases stage that decides it, in this file.
    start, _ = _span(lines[FIND], "find", encoding)
    where = types.TextDocumentPositionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        position=types.Position(line=FIND, character=start + 2),
    )
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=where.text_document, position=where.position)
    )
    assert hover is not None
    assert hover.range is not None
    assert cut(lines[FIND], hover.range.start.character, hover.range.end.character, encoding) == (
        "find"
    )
    assert "find -> Glob" in hover.contents.value  # type: ignore[union-attr]
    target = await client.text_document_definition_async(
        types.DefinitionParams(text_document=where.text_document, position=where.position)
    )
    assert isinstance(target, types.Location)
    assert target.uri == uri
    assert target.range.start.line == FIND
    assert cut(lines[FIND], target.range.start.character, target.range.end.character, encoding) == (
        "find"
    )

    # The quick fix's edit, applied by the oracle, replaces exactly 'Webfetch'.
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=where.text_document,
            range=diag.range,
            context=types.CodeActionContext(diagnostics=[diag]),
        )
    )
    fix = next(
        a for a in actions or [] if isinstance(a, types.CodeAction) and "WebFetch" in a.title
    )
    assert fix.edit is not None
    assert fix.edit.changes is not None
    (edit,) = fix.edit.changes[uri]
    codec, width = CODEC[encoding]
    raw = lines[WEBFETCH].encode(codec)
    fixed = (
        raw[: edit.range.start.character * width]
        + edit.new_text.encode(codec)
        + raw[edit.range.end.character * width :]
    ).decode(codec)
    assert fixed == lines[WEBFETCH].replace(", Webfetch]", ", WebFetch]")


async def test_yaml_line_breaks_the_editor_does_not_count(
    client: LanguageClient, project: Path
) -> None:
    """YAML (and so ``lint``) breaks lines at U+0085, U+2028 and U+2029 inside a quoted
    string too; an editor breaks only at CR and LF. The finding lint places on its line 8
    is on the editor's line 6, and the server sends whole texts, never an edit against
    lines it would split differently."""
    path = project / "breaks.yaml"
    path.write_text(
        'bridge-rules: 1\ndescription: "one\u2028two\x85three"\npin: claude-code@2.1.330\n'
        "names:\n  - kind: canonical\n    names: [\U0001f600, Webfetch]\n",
        encoding="utf-8",
    )
    lint = subprocess.run(
        [COMMAND[0], "lint", "--format", "json", path.name],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    lines = path.read_text(encoding="utf-8").split("\n")
    (where,) = [
        (d["line"], d["col"])
        for d in json.loads(lint.stdout)["diagnostics"]
        if "'Webfetch'" in d["message"]
    ]
    assert where == (8, 16)  # YAML's count: two more lines, code points
    uri = await open_file(client, path)
    (diag,) = [d for d in client.diagnostics[uri] if "'Webfetch'" in d.message]
    assert diag.range.start.line == 5
    start, end = diag.range.start.character, diag.range.end.character
    assert cut(lines[5], start, end, "utf-16") == "Webfetch"
