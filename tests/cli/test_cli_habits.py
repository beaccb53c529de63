"""The CLI behaves like the tools users know: colour switches, -h, completion, "did you mean"
(once), root options before or after the command, explain's unknown-name warning, lint's
discovery and code filters (an unknown code is a usage error)."""

from __future__ import annotations

import json
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
REQUEST = {"tools": [{"name": "Read", "input_schema": {"type": "object"}}]}


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
    assert "no rule files found in this project" in err
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


def test_pins_before_or_after_the_command(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "request.json").write_text(json.dumps(REQUEST), encoding="utf-8")
    pins = tmp_path / "mine"
    pin = str(pins / "claude-code@9.0.0.json")
    assert (
        run(capsys, "pin", "import", "request.json", "--name", "claude-code@9.0.0", "-o", pin)[0]
        == 0
    )
    before = run(capsys, "--pins", str(pins), "pin", "show", "claude-code@9.0.0")
    after = run(capsys, "pin", "show", "claude-code@9.0.0", "--pins", str(pins))
    assert before == after
    assert after[0] == 0
    assert "1 tools:\n    Read" in after[1]
    assert run(capsys, "pin", "show", "claude-code@9.0.0")[0] == 2  # not for the next run


def test_allow_outside_before_or_after_the_command(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "base.yaml").write_text("bridge-rules: 1\n", encoding="utf-8")
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "main.yaml").write_text(
        "bridge-rules: 1\nextends: ../base.yaml\n", encoding="utf-8"
    )
    assert run(capsys, "lint", "rules/main.yaml")[0] == 2
    assert run(capsys, "--allow-outside", "lint", "rules/main.yaml")[0] == 0
    assert run(capsys, "lint", "rules/main.yaml", "--allow-outside")[0] == 0
    assert run(capsys, "lint", "rules/main.yaml")[0] == 2


@pytest.mark.parametrize("command", [["explain", "read"], ["codes", "BR301"], ["drift", "-h"]])
def test_every_command_takes_the_root_options(
    capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    code, out, _ = run(capsys, *command, "--color", "never", "--pins", ".", "--allow-outside")
    assert code == 0
    assert out


@pytest.mark.parametrize(("typo", "meant"), [(["lnt"], "lint"), (["pin", "lst"], "list")])
def test_a_mistyped_command_gets_one_suggestion(
    capsys: pytest.CaptureFixture[str], typo: list[str], meant: str
) -> None:
    code, _, err = run(capsys, *typo)
    assert code == 2
    assert err.count("Did you mean") == 1
    assert f"Did you mean '{meant}'?" in err


def test_unknown_codes_in_select_and_ignore_are_usage_errors(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "lint", "--select", "br3,XX1", "--ignore", "BR9", "default")
    assert (code, out) == (2, "")
    prefixes = "codes start with BR0, BR1, BR2, BR3, BR4, BR5"
    assert err.splitlines() == [
        f"bridge-rules: error: --select: no code starts with 'XX1'; {prefixes} "
        "(`bridge-rules codes` lists them)",
        f"bridge-rules: error: --ignore: no code starts with 'BR9'; {prefixes} "
        "(`bridge-rules codes` lists them)",
    ]
    assert run(capsys, "lint", "--select", "br3,BR401", "--ignore", "BR", "default")[0] == 0


def test_select_and_ignore_each_say_what_they_do(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "lint", "-h")
    flat = " ".join(out.split())
    assert "--select CODE,... Report only findings whose code" in flat
    assert "--ignore CODE,... Drop findings whose code" in flat


def test_bare_lint_walks_up_to_the_project_and_skips_yaml_that_is_not_rules(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "rules" / "ci").mkdir(parents=True)
    (tmp_path / "rules" / "mine.yaml").write_text("# my rules\n---\n" + BAD_NAME, encoding="utf-8")
    (tmp_path / "rules" / "ci" / "workflow.yaml").write_text("on: push\njobs: {}\n", "utf-8")
    (tmp_path / "src" / "deep").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "src" / "deep")
    code, out, err = run(capsys, "lint")
    assert code == 1
    assert out.startswith("../../rules/mine.yaml:7:13: error[BR301]")
    assert "workflow" not in out + err
    code, _, err = run(capsys, "lint", "-v")
    assert code == 1
    assert err == (
        "bridge-rules: found 1 rule files (conventional paths):\n  ../../rules/mine.yaml\n"
        "bridge-rules: skipped, not starting with 'bridge-rules:':\n"
        "  ../../rules/ci/workflow.yaml\n"
    )


@pytest.mark.parametrize("where", ["before", "after"])
def test_allow_outside_does_not_outlive_its_run_in_the_process(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """A library caller (or a test) that runs a command with ``--allow-outside`` and then
    calls ``load()`` in the same process gets the default back: the flag left set made a
    later ``extends: ../x`` load in another test of the same worker."""
    from bridge_rules.outside import allow_outside_default

    monkeypatch.delenv("BRIDGE_RULES_ALLOW_OUTSIDE", raising=False)
    argv = ["codes", "BR301"]
    argv = ["--allow-outside", *argv] if where == "before" else [*argv, "--allow-outside"]
    assert run(capsys, *argv)[0] == 0
    assert allow_outside_default() is False
