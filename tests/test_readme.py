"""The README opens with the two commands, and CI runs the README's test command verbatim."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```sh\n(.+?)\n```", text, flags=re.S)[:2]


def test_readme_opens_with_two_one_line_commands() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    head = text.split("\n## ", 1)[0]
    assert head.count("```sh") == 2
    install, test = _readme_commands()
    assert "\n" not in install
    assert "\n" not in test
    assert "pip install" in install
    assert "bridge-rules" in install
    assert ".[dev]" in test
    assert "pytest" in test


def test_ci_runs_the_readme_test_command() -> None:
    _, test = _readme_commands()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert test in ci.splitlines()
