"""``lint --target``: what an API would reject in the pinned tools; do the rules convert it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bridge_rules.cli.app import main

PI = "bridge-rules: 1\nlocal_pin: pi@0.73.1\n"


def lint(tmp_path: Path, body: str, *args: str) -> int:
    path = tmp_path / "r.yaml"
    path.write_text(PI + body, encoding="utf-8")
    return main(["lint", str(path), "-f", "json", *args])


def findings(capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    doc = json.loads(capsys.readouterr().out)
    return [d for d in doc["diagnostics"] if str(d["code"]) in ("BR313", "BR314")]


def test_an_api_the_rules_do_not_convert_for_is_a_placed_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert lint(tmp_path, "", "--target", "openai-strict") == 0  # warnings: exit 0 unless --strict
    found = findings(capsys)
    assert {d["code"] for d in found} == {"BR313"}
    messages = " ".join(str(d["message"]) for d in found)
    assert "openai-strict would reject the schema of pi@0.73.1 tool 'read'" in messages
    assert "every property must be required (optional: offset, limit)" in messages
    assert all(d["line"] == 2 for d in found)  # the `local_pin:` line


def test_the_rules_own_target_is_reported_as_converted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert lint(tmp_path, "schemas: {target: openai-strict}\n", "--target", "openai-strict") == 0
    found = findings(capsys)
    assert found
    assert {d["code"] for d in found} == {"BR314"}
    assert all("the rules convert it (" in str(d["message"]) for d in found)


def test_an_unknown_api_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert lint(tmp_path, "", "--target", "cohere") == 2
    assert "--target takes one of" in capsys.readouterr().err


def test_strict_makes_the_warnings_fail(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert lint(tmp_path, "", "--target", "gemini", "--strict") == 1
    assert findings(capsys)
