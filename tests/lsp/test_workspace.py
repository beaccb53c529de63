"""The project as ``lint`` finds it: findings placed on the user's ``extends:`` line, and
``pyproject.toml [tool.bridge-rules]`` (a layered set). The oracle is a bare ``bridge-rules
lint --format json`` at the project root, run as its own process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pytest_lsp import LanguageClient
from tests.lsp.helpers import open_file, replace

CLI = str(Path(sys.executable).parent / "bridge-rules")


def _lint(project: Path, *paths: str) -> list[tuple[str, int, int, str, str]]:
    done = subprocess.run(
        [CLI, "lint", "--format", "json", *paths],
        cwd=project,
        capture_output=True,
        text=True,
        env=dict(os.environ),
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    return sorted(
        (
            d["file"],
            d["line"],
            d["col"],
            d["code"],
            d["message"] + (f"; {d['hint']}" if d["hint"] else ""),
        )
        for d in json.loads(done.stdout)["diagnostics"]
    )


def _served(client: LanguageClient, project: Path) -> list[tuple[str, int, int, str, str]]:
    return sorted(
        (
            Path(uri.removeprefix("file://")).relative_to(project).as_posix(),
            d.range.start.line + 1,
            d.range.start.character + 1,
            str(d.code),
            d.message,
        )
        for uri, diags in client.diagnostics.items()
        for d in diags
    )


async def test_a_profiles_findings_land_on_the_extends_line(
    client: LanguageClient, project: Path
) -> None:
    path = project / "older.yaml"
    path.write_text(
        "bridge-rules: 1\nextends: opencode\npin: claude-code@2.1.330\n", encoding="utf-8"
    )
    uri = await open_file(client, path)
    assert list(client.diagnostics[uri]) == []
    # An older pin (unsaved): the profile's bindings name tools that pin lacks.
    older = "bridge-rules: 1\nextends: opencode\npin: claude-code@2.1.0\n"
    diags = await replace(client, uri, older, 2)
    path.write_text(older, encoding="utf-8")
    expected = _lint(project, "older.yaml")
    assert expected
    assert all(line == 2 for _, line, *_ in expected)  # lint's own placement
    assert all("in profile 'opencode'" in d.message for d in diags)
    got = sorted(
        ("older.yaml", d.range.start.line + 1, d.range.start.character + 1, str(d.code), d.message)
        for d in diags
    )
    assert got == expected
