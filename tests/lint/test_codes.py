"""Every documented code's failing example reports it through ``lint``; its passing one does not.

Examples are written as one rule file; ``# name.yaml`` lines split an example
into several files (the first is linted), ``\\xNN`` stands for a raw byte, and
the alias-bomb example (BR010) is abridged in the docs, so the test builds it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from bridge_rules.cli.serve_lint import lint_config
from bridge_rules.codes import CODES
from bridge_rules.lint.catalogue import load_checks
from bridge_rules.lint.runner import lint_target

LINT_CODES = sorted(
    {c for c in CODES if c[:3] in ("BR0", "BR1", "BR2", "BR3")}
    | {code for registered in load_checks() for code in registered.codes if code in CODES}
)
SERVE_CONFIG_CODES = frozenset({"BR322"})
"""Codes found in a ``serve --config`` file's routes: ``lint --config FILE`` reports them."""


def _alias_bomb() -> bytes:
    lines = ["bridge-rules: 1", "a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    for level in range(1, 7):
        refs = ", ".join([f"*a{level - 1}"] * 9)
        lines.append(f"a{level}: &a{level} [{refs}]")
    return ("\n".join(lines) + "\n").encode()


def _write_example(text: str, where: Path, code: str, bad: bool) -> Path:
    if code == "BR010" and bad:
        path = where / "rules.yaml"
        path.write_bytes(_alias_bomb())
        return path
    parts = re.split(r"^# (\S+\.(?:yaml|json))\n", text, flags=re.M)
    files = (
        list(zip(parts[1::2], parts[2::2], strict=False))
        if len(parts) > 1
        else [("rules.yaml", text)]
    )
    for name, body in files:
        raw = re.sub(rb"\\x([0-9a-fA-F]{2})", lambda m: bytes([int(m[1], 16)]), body.encode())
        (where / name).parent.mkdir(parents=True, exist_ok=True)  # a project pin beside
        (where / name).write_bytes(raw)
    return where / files[0][0]


def _codes(text: str, tmp_path: Path, code: str, bad: bool) -> set[str]:
    path = _write_example(text, tmp_path, code, bad)
    here = os.getcwd()
    os.chdir(tmp_path)  # an example's own pins (.bridge-rules/pins) are the project's
    try:
        if code in SERVE_CONFIG_CODES:
            return {d.code for d in lint_config(str(path)).diagnostics}
        return {d.code for d in lint_target(path).diagnostics}
    finally:
        os.chdir(here)


@pytest.mark.parametrize("code", LINT_CODES)
def test_failing_example_reports_the_code(code: str, tmp_path: Path) -> None:
    assert code in _codes(CODES[code].bad, tmp_path, code, bad=True)


@pytest.mark.parametrize("code", LINT_CODES)
def test_passing_example_does_not(code: str, tmp_path: Path) -> None:
    found = _codes(CODES[code].good, tmp_path, code, bad=False)
    assert code not in found


def test_the_cli_reference_covers_every_code_range_to_its_last_code() -> None:
    """docs/cli.md lists the codes by range; a range that stops short hides the newest codes."""
    reference = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text("utf-8")
    last: dict[str, str] = {}
    for code in sorted(CODES):
        last[code[:3]] = code
    missing = [code for code in last.values() if code not in reference]
    assert not missing, f"docs/cli.md does not name {missing}"
