"""`bridge-rules explain` as a user runs it: real process, real exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

EXE = [sys.executable, "-c", "import sys; from bridge_rules.cli.app import main; sys.exit(main())"]


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*EXE, *args], capture_output=True, text=True, cwd=cwd, timeout=60, check=False
    )


def test_explain_text_names_every_stage_and_the_deciding_rule() -> None:
    proc = run("explain", "read")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith("read -> Read\n")
    assert "=> 1. bindings" in out  # the default binding read <-> Read
    assert "default.yaml:" in out
    assert "Read_ide: maps back" in out


def test_explain_json_with_registered_and_profile() -> None:
    proc = run(
        "explain",
        "find",
        "--rules",
        "pi-anthropic-messages",
        "--registered",
        "read,find",
        "--format",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["outbound"]["wire"] == "mcp__pi__find"
    assert data["inbound"]["registered"] == ["read", "find"]
    assert [c["wire"] for c in data["inbound"]["checks"]] == ["mcp__pi__find", "mcp__pi__find_ide"]
    assert all(c["maps_back"] for c in data["inbound"]["checks"])


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (
            ["explain", "read", "--rules", "no-such-profile"],
            "error[BR008] unknown profile 'no-such-profile'",
        ),
        (["explain", "read", "--rules", "./missing.yaml"], "error[BR001]"),
        (["explain", "read", "--format", "yaml"], "'yaml' is not one of 'text', 'json'"),
    ],
)
def test_usage_errors_exit_2_without_traceback(args: list[str], needle: str) -> None:
    proc = run(*args)
    assert proc.returncode == 2
    assert needle in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout


def test_broken_rules_exit_2_with_every_located_problem(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("bridge-rules: 1\nnmes: []\nnames:\n  - kind: alias\n", encoding="utf-8")
    proc = run("explain", "read", "--rules", str(bad))
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert any(
        ":2:1: error[BR102] unknown key 'nmes'" in line and "did you mean 'names'?" in line
        for line in lines
    )
    assert any(":4:11: error[BR107]" in line for line in lines)
    assert "Traceback" not in proc.stderr


def test_version_and_help() -> None:
    assert run("--version").stdout.startswith("bridge-rules ")
    help_text = run("--help").stdout
    assert "explain" in help_text
