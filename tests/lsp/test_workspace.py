"""The project as ``lint`` finds it: findings placed on the user's ``extends:`` line, and
``pyproject.toml [tool.bridge-rules]`` (a layered set). The oracle is a bare ``bridge-rules
lint --format json`` at the project root, run as its own process."""

from __future__ import annotations

import fnmatch
import json
import os
import subprocess
import sys
from pathlib import Path

from lsprotocol import types
from pytest_lsp import LanguageClient
from tests.lsp.helpers import open_file, published, replace
from tests.lsp.test_diagnostics import SEVERITY

CLI = str(Path(sys.executable).parent / "bridge-rules")


Finding = tuple[str, int, int, str, str, str]


def _lint(project: Path, *paths: str, exits: tuple[int, ...] = (0, 1)) -> list[Finding]:
    done = subprocess.run(
        [CLI, "lint", "--format", "json", *paths],
        cwd=project,
        capture_output=True,
        text=True,
        env=dict(os.environ),
        check=False,
    )
    assert done.returncode in exits, done.stderr
    return sorted(
        (
            d["file"],
            d["line"],
            d["col"],
            d["code"],
            d["severity"],
            d["message"] + (f"; {d['hint']}" if d["hint"] else ""),
        )
        for d in json.loads(done.stdout)["diagnostics"]
    )


def _served(client: LanguageClient, project: Path) -> list[Finding]:
    return sorted(
        (
            Path(uri.removeprefix("file://")).relative_to(project).as_posix(),
            d.range.start.line + 1,
            d.range.start.character + 1,
            str(d.code),
            SEVERITY[d.severity] if d.severity else "",
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
        (
            "older.yaml",
            d.range.start.line + 1,
            d.range.start.character + 1,
            str(d.code),
            SEVERITY[d.severity] if d.severity else "",
            d.message,
        )
        for d in diags
    )
    assert got == expected


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


async def test_pyproject_names_a_layered_rule_set(client: LanguageClient, project: Path) -> None:
    """A bare ``lint`` checks ``team/*.yaml`` as one layered set, as pyproject.toml says; the
    server checks the same set when any layer is opened, and again when the file a layer
    extends (not itself listed) changes."""
    for stale in project.glob("*.yaml"):
        stale.unlink()
    _write(
        project / "pyproject.toml",
        '[tool.bridge-rules]\nrules = ["team/*.yaml"]\nlayered = true\n',
    )
    base = _write(project / "team/base/common.yaml", "bridge-rules: 1\npin: claude-code@2.1.330\n")
    a = _write(
        project / "team/a.yaml",
        "bridge-rules: 1\nextends: base/common.yaml\nnames:\n  - kind: canonical\n"
        "    names: [Skill]\n  - kind: aliases\n    map: {find: Glob}\n",
    )
    # Alone, b.yaml is clean; layered over a.yaml, its alias collides with a's on 'Glob'.
    b = _write(
        project / "team/b.yaml",
        "bridge-rules: 1\nnames:\n  - kind: aliases\n    id: more\n    map: {ls: Glob}\n",
    )
    assert _lint(project, "team/b.yaml") == []  # the layering is what finds it
    await open_file(client, b)
    await published(client, a.as_uri())  # the layer that holds the finding hears of it too
    expected = _lint(project)  # a bare lint: discovery through pyproject.toml
    assert [code for _, _, _, code, *_ in expected] == ["BR203"]
    assert _served(client, project) == expected
    # The base every layer builds on moves to an older pin (unsaved): 'Skill', which a.yaml
    # names, is not in it. The layered set is checked again and the finding lands in a.yaml.
    base_uri = await open_file(client, base)
    older = "bridge-rules: 1\npin: claude-code@2.1.0\n"
    await replace(client, base_uri, older, 2, wait=[a.as_uri(), b.as_uri()])
    base.write_text(older, encoding="utf-8")
    expected = _lint(project)
    assert [code for _, _, _, code, *_ in expected] == ["BR301", "BR203"]
    assert _served(client, project) == expected
    # A layer added since: opening it checks the set it now belongs to.
    c = _write(project / "team/c.yaml", "bridge-rules: 1\n")
    await open_file(client, c)
    assert _served(client, project) == _lint(project)
    # Fixed again: every finding goes, in every layer, as lint's would.
    fixed = "bridge-rules: 1\nnames:\n  - kind: aliases\n    id: more\n    map: {ls: LS}\n"
    await replace(client, b.as_uri(), fixed, 2, wait=[a.as_uri()])
    b.write_text(fixed, encoding="utf-8")
    assert _served(client, project) == _lint(project)


async def test_an_unusable_pyproject_is_said_as_lint_says_it(
    client: LanguageClient, project: Path
) -> None:
    """lint stops (exit 2) with a located message; the server says the same line once and
    still checks the rule file that is open."""
    _write(project / "pyproject.toml", '[tool.bridge-rules]\nrules = "team/*.yaml"\n')
    env = dict(os.environ)
    done = subprocess.run(
        [CLI, "lint"], cwd=project, capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 2
    uri = await open_file(client, project / "br301-fail.yaml")
    assert any(d.code == "BR301" for d in client.diagnostics[uri])
    await replace(client, uri, (project / "br301-pass.yaml").read_text(encoding="utf-8"), 2)
    said = [m.message for m in client.messages if m.type == types.MessageType.Error]
    assert said == [done.stderr.strip()]


async def test_a_symlink_out_of_the_project_is_refused_as_lint_refuses_it(
    client: LanguageClient, project: Path, tmp_path: Path
) -> None:
    outside = _write(tmp_path / "elsewhere" / "secret.yaml", "bridge-rules: 1\n")
    ok = _write(project / "rules" / "ok.yaml", "bridge-rules: 1\npin: claude-code@2.1.330\n")
    link = project / "rules" / "out.yaml"
    link.symlink_to(outside)
    expected = [f for f in _lint(project, exits=(2,)) if f[3] == "BR015"]  # 2: unreadable
    assert [f[0] for f in expected] == ["rules/out.yaml"]
    await open_file(client, ok)
    diags = await published(client, link.as_uri())
    assert [(d.code, d.message) for d in diags] == [(f[3], f[5]) for f in expected]


def _watched(client: LanguageClient) -> list[str]:
    """The globs the server asked this client to watch (an editor then reports changes)."""
    globs = []
    for registration in client.registered:  # type: ignore[attr-defined]  # see conftest
        if registration.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES:
            options = registration.register_options
            watchers = options["watchers"] if isinstance(options, dict) else options.watchers
            globs += [w["globPattern"] if isinstance(w, dict) else w.glob_pattern for w in watchers]
    return globs


def _changed_on_disk(client: LanguageClient, *paths: Path) -> None:
    globs = _watched(client)
    for path in paths:  # the editor reports only what the server asked it to watch
        assert any(fnmatch.fnmatchcase(str(path), glob) for glob in globs), (path, globs)
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[
                types.FileEvent(uri=path.as_uri(), type=types.FileChangeType.Changed)
                for path in paths
            ]
        )
    )


async def test_files_changed_on_disk_are_checked_again(
    client: LanguageClient, project: Path
) -> None:
    """A base changed by another tool (a checkout) re-checks the open file that extends it;
    a new pyproject table re-checks every rule set, opened or not, as a bare lint finds."""
    base = _write(project / "base.yaml", "bridge-rules: 1\npin: claude-code@2.1.330\n")
    child = _write(
        project / "child.yaml",
        "bridge-rules: 1\nextends: base.yaml\nnames:\n  - kind: canonical\n    names: [Skill]\n",
    )
    await open_file(client, child)
    assert list(client.diagnostics[child.as_uri()]) == []
    client.diagnostics.clear()
    base.write_text("bridge-rules: 1\npin: claude-code@2.1.0\n", encoding="utf-8")
    _changed_on_disk(client, base)
    await published(client, child.as_uri())
    assert _served(client, project) == _lint(project, "child.yaml")
    assert [f[3] for f in _lint(project, "child.yaml")] == ["BR301"]

    team = _write(project / "team" / "a.yaml", "bridge-rules: 1\nextends: ../base.yaml\n")
    team.write_text(
        "bridge-rules: 1\npin: claude-code@2.1.330\nnames:\n  - kind: aliases\n"
        "    map: {find: Glob, ls: Glob}\n",
        encoding="utf-8",
    )
    pyproject = _write(project / "pyproject.toml", '[tool.bridge-rules]\nrules = ["team/*.yaml"]\n')
    client.diagnostics.clear()
    _changed_on_disk(client, pyproject)
    await published(client, team.as_uri())
    expected = _lint(project)
    assert [f[3] for f in expected] == ["BR203"]
    assert [f for f in _served(client, project) if f[0].startswith("team/")] == expected
