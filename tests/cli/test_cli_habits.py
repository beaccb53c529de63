"""The CLI behaves like the tools users know: colour switches, -h, completion, "did you mean",
explain's unknown-name warning, lint's discovery and code filters."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge_rules.cli import style
from bridge_rules.cli.app import main

RED = "\x1b[1;31m"
COLLIDE_A = "bridge-rules: 1\nnames:\n  - kind: aliases\n    map: {find: Glob}\n"
COLLIDE_B = "bridge-rules: 1\nnames:\n  - kind: aliases\n    map: {ls: Glob}\n"
BAD_NAME = (
    "bridge-rules: 1\npin: claude-code@2.1.330\nnames:\n  - kind: canonical\n"
    "    names: [TodoWrites]\n"
)


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("NO_COLOR", "FORCE_COLOR", "GITHUB_ACTIONS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    style.set_mode("auto")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    style.set_mode("auto")
    return code, out, err


def test_colour_follows_force_color_no_color_and_the_option(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "bridge-rules.yaml").write_text(BAD_NAME, encoding="utf-8")
    assert RED not in run(capsys, "lint")[1]  # not a terminal
    monkeypatch.setenv("FORCE_COLOR", "1")
    code, out, _ = run(capsys, "lint")
    assert code == 1
    assert f"{RED}error\x1b[0m[BR301]" in out
    assert RED not in run(capsys, "lint", "--color", "never")[1]
    assert RED not in run(capsys, "--color", "never", "lint")[1]
    monkeypatch.delenv("FORCE_COLOR")
    monkeypatch.setenv("NO_COLOR", "1")
    assert RED not in run(capsys, "lint")[1]
    assert RED in run(capsys, "lint", "--color", "always")[1]


def test_short_help_and_completion(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "-h")
    assert code == 0
    assert "--install-completion" in out
    assert "--color [auto|always|never]" in out
    code, out, _ = run(capsys, "lint", "-h")
    assert code == 0
    assert "[PATH]..." in out
    assert "--format [text|json|github|sarif]" in out
    assert "list[" not in out
    assert "[[" not in out


@pytest.mark.parametrize(
    ("args", "hint"),
    [
        (["explain", "read", "--rules", "pi-antropic-messages"], "'pi-anthropic-messages'?"),
        (["lint", "--pin", "claude-code@2.1.33", "default"], "'claude-code@2.1.330'?"),
    ],
)
def test_did_you_mean_for_profiles_and_pins(
    capsys: pytest.CaptureFixture[str], args: list[str], hint: str
) -> None:
    code, _, err = run(capsys, *args)
    assert code == 2
    assert f"did you mean {hint}" in err


def test_did_you_mean_for_canonical_names(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "r.yaml").write_text(BAD_NAME, encoding="utf-8")
    code, out, _ = run(capsys, "lint", "r.yaml")
    assert code == 1
    assert "canonical name 'TodoWrites' is not a tool" in out
    assert "did you mean 'TodoWrite'?" in out


def test_explain_warns_about_unknown_names(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "explain", "reed")
    assert code == 1
    assert out.startswith("reed -> mcp__pi__reed\n")  # the trace is still printed
    assert "'reed' is not a local tool name the rules know; did you mean 'read'?" in err
    code, _, err = run(capsys, "explain", "Read_ide")
    assert code == 1
    assert "wire name of 'read'" in err
    assert run(capsys, "explain", "reed", "--any")[0] == 0
    assert run(capsys, "explain", "reed", "--registered", "reed")[0] == 0
    assert run(capsys, "explain", "read")[0] == 0


def test_trace_quotes_each_rule_once(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "explain", "ls")
    assert "reverse entry from prefix 'mcp__pi__' -> ls" in out
    assert "''" not in out
    _, out, _ = run(capsys, "explain", "read")
    assert "matched 'read: Read' -> 'Read'" in out
    assert "reverse entry from bindings 'read: Read' -> read" in out
    # From another directory, a shipped file is shown relative to the package or checkout.
    assert "  [rules/default.yaml:" in out


def test_lint_paths_are_independent_unless_layered(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "a.yaml").write_text(COLLIDE_A, encoding="utf-8")
    (rules / "b.yaml").write_text(COLLIDE_B, encoding="utf-8")
    code, out, _ = run(capsys, "lint", "rules")
    assert (code, out) == (0, "0 errors, 0 warnings in 2 rule sets\n")
    assert run(capsys, "lint")[2] == ""  # discovered: the same two files
    code, out, _ = run(capsys, "lint", "--layered", "rules/a.yaml", "rules/b.yaml")
    assert "warning[BR203] local tools 'find', 'ls' resolve to wire name 'Glob'" in out
    assert out.endswith("0 errors, 1 warning in 1 rule set\n")
    assert run(capsys, "lint", "--layered", "--strict", "rules")[0] == 1
    assert run(capsys, "lint", "--layered", "--strict", "--exit-zero", "rules")[0] == 0
    _, out, _ = run(capsys, "lint", "--layered", "--ignore", "BR2", "rules")
    assert out == "0 errors, 0 warnings in 1 rule set\n"
    _, out, _ = run(capsys, "lint", "--layered", "--select", "br203,BR3", "rules")
    assert "BR203" in out


def test_lint_discovery_reads_pyproject_and_says_when_nothing_is_found(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = run(capsys, "lint")
    assert code == 2
    assert "no rule files found here" in err
    (tmp_path / "bridge").mkdir()
    (tmp_path / "bridge" / "a.yaml").write_text(COLLIDE_A, encoding="utf-8")
    (tmp_path / "bridge" / "b.yaml").write_text(COLLIDE_B, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.bridge-rules]\nrules = ["bridge/*.yaml"]\nlayered = true\n', encoding="utf-8"
    )
    code, out, _ = run(capsys, "lint", "--strict")
    assert code == 1
    assert "BR203" in out
    (tmp_path / "pyproject.toml").write_text('[tool.bridge-rules]\nrule = ["x"]\n')
    code, _, err = run(capsys, "lint")
    assert code == 2
    assert "unknown key 'rule' in [tool.bridge-rules]" in err
