"""``bridge-rules lint`` and ``codes`` end to end: exit codes, formats, output files."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from bridge_rules.cli.app import main
from bridge_rules.lint import catalogue, registry
from bridge_rules.resources import profile_names

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
SARIF_SCHEMA = json.loads((HERE / "sarif" / "sarif-schema-2.1.0.json").read_text("utf-8"))


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(FIXTURES)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["lint", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_clean_findings_and_strict(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "br301-pass.yaml")[0] == 0
    assert run(capsys, "br301-fail.yaml")[0] == 1
    assert run(capsys, "br304-fail.yaml")[0] == 0  # warnings only
    assert run(capsys, "--strict", "br304-fail.yaml")[0] == 1


def test_all_targets_in_one_run(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "br301-fail.yaml", "br306-fail.yaml", "loader-fail.yaml")
    assert code == 1
    assert {"[BR301]", "[BR306]", "[BR102]", "[BR107]"} <= {
        line.split(" ")[1][-7:] for line in out.splitlines() if line.startswith(("br", "loader"))
    }
    assert out.splitlines()[-1] == "12 errors, 0 warnings in 3 rule sets"


def test_bare_lint_checks_the_project_here(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(HERE.parents[1])  # this repository: rules/ holds the shipped rules
    code, out, _ = run(capsys)
    assert code == 0
    assert out.startswith(f"0 errors, 0 warnings in {len(profile_names())} rule sets")
    assert "suppressed" in out


def test_usage_errors_and_unreadable_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "no-such-file.yaml")[0] == 2
    code, _, err = run(capsys, "--pin", "claude-code@9.9.9", "br301-pass.yaml")
    assert code == 2
    assert "available: claude-code@2.1.0, claude-code@2.1.322, claude-code@2.1.330" in err
    assert run(capsys, "--pin", "pi@0.73.1", "br301-pass.yaml")[0] == 2
    assert run(capsys, "--format", "xml", "br301-pass.yaml")[0] == 2


def test_pin_override_reports_drift(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--pin", "claude-code@2.1.0", "br301-pass.yaml")
    assert code == 1
    assert "canonical name 'TaskStop' is not a tool of claude-code@2.1.0" in out
    assert "present in 2.1.322, 2.1.330" in out


def test_internal_error_exits_3(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(ctx: registry.LintContext) -> list[object]:
        raise RuntimeError("boom")

    catalogue.load_checks()
    check = registry.Check("zz-broken", broken, (), "")  # type: ignore[arg-type]
    monkeypatch.setitem(registry.REGISTRY, "zz-broken", check)
    catalogue.load_checks.cache_clear()
    try:
        code, _, err = run(capsys, "br301-pass.yaml")
    finally:
        monkeypatch.undo()
        catalogue.load_checks.cache_clear()
    assert code == 3
    assert "internal error" in err
    assert "Traceback" not in err


def test_json_and_output_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    code, out, _ = run(capsys, "--format", "json", "--output", str(target), "br304-fail.yaml")
    assert (code, out) == (0, "")
    doc = json.loads(target.read_text("utf-8"))
    assert doc["summary"]["warnings"] == 2
    first = doc["diagnostics"][0]
    assert (first["code"], first["file"], first["line"], first["col"]) == (
        "BR304",
        "br304-fail.yaml",
        8,
        5,
    )
    assert first["related"][0]["line"] == 6


def test_github_format_is_automatic_under_actions(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    _, out, _ = run(capsys, "br307-fail.yaml")
    first = out.splitlines()[0]
    assert first.startswith("::error file=br307-fail.yaml,line=4,col=5,title=BR307::local tool ")
    assert "%0Abr307-fail.yaml:6:5: prefix stage 'prefix'" in first


@pytest.mark.parametrize("case", ["br301-fail", "br303-fail", "br201-fail", "br301-pass"])
def test_sarif_validates_against_the_official_schema(
    capsys: pytest.CaptureFixture[str], case: str
) -> None:
    _, out, _ = run(capsys, "--format", "sarif", f"{case}.yaml")
    doc = json.loads(out)
    validator = jsonschema.validators.validator_for(SARIF_SCHEMA)(SARIF_SCHEMA)
    errors = [e.message for e in validator.iter_errors(doc)]
    assert errors == []
    results = doc["runs"][0]["results"]
    rules = doc["runs"][0]["tool"]["driver"]["rules"]
    for result in results:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
    if case.endswith("fail"):
        assert results
        region = results[0]["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1


def test_sarif_schema_rejects_a_broken_log() -> None:
    validator = jsonschema.validators.validator_for(SARIF_SCHEMA)(SARIF_SCHEMA)
    assert not validator.is_valid({"version": "2.1.0", "runs": [{"results": []}]})


def test_codes_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["codes"]) == 0
    listing = capsys.readouterr().out
    assert "BR301  error    not a tool of the pin" in listing
    assert main(["codes", "br303"]) == 0
    doc = capsys.readouterr().out
    assert doc.startswith("BR303 (warning): shadowed entry")
    assert "Fails:" in doc
    assert "Passes:" in doc
    assert main(["codes", "BR399"]) == 2


def test_pre_commit_hook_runs_when_a_discovered_file_changes(tmp_path: Path) -> None:
    import re

    from ruamel.yaml import YAML

    from bridge_rules.lint.discover import discover

    hooks = YAML(typ="safe", pure=True).load(
        (HERE.parents[1] / ".pre-commit-hooks.yaml").read_text()
    )
    (hook,) = hooks
    assert hook["id"] == "bridge-rules-lint"
    assert hook["entry"] == "bridge-rules lint"
    assert hook["pass_filenames"] is False  # the hook lints what a bare `lint` discovers
    pattern = re.compile(hook["files"])
    candidates = [
        "bridge-rules.yaml",
        "my-bridge.bridge-rules.yml",
        ".bridge-rules/team.yaml",
        "rules/default.yaml",
        "rules/profiles/opencode.yaml",
        "my-bridge.yaml",
        "config/rules.yaml",
        "docs/rules/x.md",
        ".github/workflows/ci.yaml",
    ]
    for name in candidates:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("bridge-rules: 1\n", encoding="utf-8")
    found = {p.as_posix() for p in discover(tmp_path).paths}
    found = {p.removeprefix(tmp_path.as_posix() + "/") for p in found}
    assert found == {n for n in candidates if pattern.search(n)}
    assert found == set(candidates[:5])
    assert pattern.search("pyproject.toml")


@pytest.mark.parametrize(
    ("op", "line"),
    [
        (
            "rename: {filepath: path}",
            "rules.yaml:9:9: error[BR404] 'filepath' in 'rename filepath -> path' is not a field "
            "of Read in claude-code@2.1.330; did you mean 'file_path'?",
        ),
        (
            "rename: {file_path: pth}",
            "rules.yaml:9:9: error[BR405] 'pth' in 'rename file_path -> pth' is not a field of "
            "local 'read' in pi@0.73.1; did you mean 'path'?",
        ),
    ],
)
def test_a_misspelt_field_is_an_error_with_the_nearest_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, op: str, line: str
) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text(
        "bridge-rules: 1\npin: claude-code@2.1.330\nlocal_pin: pi@0.73.1\nbindings:\n"
        f"  - local: read\n    wire: Read\n    schema: canonical\n    input:\n      - {op}\n",
        encoding="utf-8",
    )
    code, out, _ = run(capsys, str(rules))
    assert code == 1
    assert line in out.replace(str(tmp_path) + "/", "")


@pytest.mark.parametrize("fmt", ["text", "github", "sarif"])
def test_a_finding_inside_a_profile_is_placed_on_the_users_extends_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, fmt: str
) -> None:
    rules = tmp_path / "mine.yaml"
    rules.write_text(
        "bridge-rules: 1\nextends: default\nnames:\n  - kind: aliases\n    id: mine\n"
        "    map: {firecrawl_map: mcp__fc__map}\n",
        encoding="utf-8",
    )
    code, out, _ = run(capsys, "--format", fmt, "--strict", str(rules))
    assert code == 1
    # The profile and its own line are named ...
    pattern = r"in profile 'default' \(rules/default\.yaml:\d+:\d+\): entry 'firecrawl_map'"
    assert re.search(pattern, out)
    if fmt == "sarif":  # ... but every result is located in the user's file
        results = json.loads(out)["runs"][0]["results"]
        uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results]
        assert uris
        assert all(uri.endswith("/mine.yaml") for uri in uris), uris
        (placed,) = [r for r in results if r["ruleId"] == "BR303"]
        assert placed["locations"][0]["physicalLocation"]["region"]["startLine"] == 2
    else:
        line = out.replace(str(tmp_path) + "/", "").splitlines()[0]
        expected = {
            "text": "mine.yaml:2:10: warning[BR303] in profile 'default' ",
            "github": "::warning file=mine.yaml,line=2,col=10,title=BR303::in profile 'default' ",
        }[fmt]
        assert line.startswith(expected)
