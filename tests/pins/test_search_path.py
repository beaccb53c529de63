"""The pin search path: a user pin used by lint and explain, its order, the unknown-pin error."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pin_fixtures import DATA

import bridge_rules
from bridge_rules.cli.app import main
from bridge_rules.diagnostics import RulesError
from bridge_rules.pins import PinError, available, load_pin, search_path, use_dirs

RULES = "bridge-rules: 1\npin: {pin}\nnames:\n  - kind: canonical\n    from_pin: true\n"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def user_pin(directory: Path, spec: str) -> Path:
    """A pin made with ``pin import`` from opencode's captured request (10 tools)."""
    path = directory / f"{spec}.json"
    code = main(["pin", "import", str(DATA / "opencode-1.18.33-request.json"), "--name", spec,
                 "--out", str(path)])  # fmt: skip
    assert code == 0
    return path


def test_a_user_pin_in_a_pins_dir_is_used_by_lint_and_explain(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, isolated: Path
) -> None:
    pins = tmp_path / "my-pins"
    user_pin(pins, "claude-code@9.0.0")
    (isolated / "r.yaml").write_text(RULES.format(pin="claude-code@9.0.0"))
    capsys.readouterr()
    code, out, err = run(capsys, "--pins", str(pins), "lint", "r.yaml")
    assert (code, err) == (0, "")
    assert "0 errors" in out
    code, out, _ = run(capsys, "--pins", str(pins), "explain", "webfetch", "-r", "r.yaml", "--any")
    assert code == 0
    assert "wire name: webfetch" in out
    code, out, _ = run(capsys, "lint", "r.yaml")  # without --pins the pin is unknown again
    assert code == 1
    assert "error[BR204] unknown pin 'claude-code@9.0.0'" in out


def test_load_finds_pins_through_the_environment_and_the_project(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, isolated: Path
) -> None:
    env_dir = tmp_path / "env-pins"
    user_pin(env_dir, "claude-code@9.1.0")
    monkeypatch.setenv(
        "BRIDGE_RULES_PINS", os.pathsep.join([str(tmp_path / "missing"), str(env_dir)])
    )
    (isolated / "r.yaml").write_text(RULES.format(pin="claude-code@9.1.0"))
    engine = bridge_rules.load(str(isolated / "r.yaml"))
    assert engine.outbound_name("webfetch") == "webfetch"
    # the nearest .bridge-rules/pins above the current directory, in <product>/<version> layout
    project = isolated / ".bridge-rules" / "pins" / "claude-code"
    project.mkdir(parents=True)
    shutil.copy(env_dir / "claude-code@9.1.0.json", project / "9.2.0.json")
    nested = isolated / "a" / "b"
    nested.mkdir(parents=True)
    monkeypatch.chdir(nested)
    assert load_pin("claude-code@9.2.0").origin == "project"
    assert "9.2.0" in available("claude-code")
    assert [d.origin for d in search_path()] == [
        "BRIDGE_RULES_PINS", "BRIDGE_RULES_PINS", "project", "user", "packaged",
    ]  # fmt: skip


def test_a_project_pin_shadows_the_packaged_one(isolated: Path) -> None:
    packaged = load_pin("claude-code@2.1.330")
    assert packaged.origin == "packaged"
    user_pin(isolated / ".bridge-rules" / "pins", "claude-code@2.1.330")
    shadowing = load_pin("claude-code@2.1.330")
    assert shadowing.origin == "project"
    assert "webfetch" in shadowing.tools


def test_an_unknown_pin_is_one_located_error_that_says_where_it_looked(
    isolated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (isolated / "r.yaml").write_text(RULES.format(pin="claude-code@2.1.0.0"))
    with pytest.raises(RulesError) as caught:
        bridge_rules.load(str(isolated / "r.yaml"))
    diags = caught.value.diagnostics
    assert [d.code for d in diags] == ["BR204"]  # no misleading BR205 for from_pin
    line = diags[0].line()
    assert line.startswith("r.yaml:2:6: error[BR204] unknown pin 'claude-code@2.1.0.0'")
    assert "(packaged)" in line
    assert "(user)" in line
    assert "did you mean 'claude-code@2.1.0'?" in line
    assert "bridge-rules pin capture claude-code@2.1.0.0 -- <agent command>" in line
    code, _, err = run(capsys, "lint", "--pin", "claude-code@7", str(isolated / "r.yaml"))
    assert code == 2
    assert "capture it with: bridge-rules pin capture claude-code@7" in err


def test_an_invalid_pin_file_is_a_pin_error(isolated: Path) -> None:
    pins = isolated / ".bridge-rules" / "pins"
    pins.mkdir(parents=True)
    (pins / "x@1.json").write_text(json.dumps({"format": "bridge-rules-pin/1", "tools": {}}))
    with pytest.raises(PinError, match="is not valid: name: required"):
        load_pin("x@1")
    (pins / "y@1.json").write_text("{")
    with pytest.raises(PinError, match="cannot read pin file"):
        load_pin("y@1")


def test_pins_dirs_reach_child_processes(tmp_path: Path) -> None:
    """``serve --workers`` rebuilds the rules in new processes; they must see --pins too."""
    pins = tmp_path / "my-pins"
    user_pin(pins, "claude-code@9.3.0")
    use_dirs([pins])
    code = "from bridge_rules.pins import load_pin; print(load_pin('claude-code@9.3.0').origin)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "--pins\n"
    use_dirs([])
    assert search_path()[0].origin != "--pins"
