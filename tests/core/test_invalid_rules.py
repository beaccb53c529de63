"""Every broken rule file gets located, coded diagnostics, all of them in one run.

Data-driven: ``fixtures/invalid/<case>.yaml`` is loaded and must fail with exactly
the error diagnostics listed in ``<case>.expected``, one per line as
``[file:]line:col CODE [text the message must contain]``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import bridge_rules
from bridge_rules.diagnostics import Severity

FIXTURES = Path(__file__).parent / "fixtures" / "invalid"
CASES = sorted(p.stem for p in FIXTURES.glob("*.yaml"))


def _parse_expected(path: Path) -> list[tuple[str | None, int, int, str, str]]:
    out = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        if not raw.strip():
            continue
        where, code, *text = raw.split(" ", 2)
        parts = where.split(":")
        file = parts[0] if len(parts) == 3 else None
        line, col = int(parts[-2]), int(parts[-1])
        out.append((file, line, col, code, text[0] if text else ""))
    return out


@pytest.mark.parametrize("case", CASES)
def test_invalid_rule_file(case: str) -> None:
    with pytest.raises(bridge_rules.RulesError) as info:
        bridge_rules.load(FIXTURES / f"{case}.yaml")
    errors = [d for d in info.value.diagnostics if d.severity is Severity.ERROR]
    expected = _parse_expected(FIXTURES / f"{case}.expected")
    got = [(Path(d.span.file).name, d.span.line, d.span.col, d.code) for d in errors]
    want = [(f or f"{case}.yaml", line, col, code) for f, line, col, code, _ in expected]
    assert got == want, "\n".join(d.line() for d in errors)
    for diag, (*_rest, text) in zip(errors, expected, strict=True):
        assert text in diag.line()
        assert "Traceback" not in diag.message


def test_error_message_lists_first_problem_and_count() -> None:
    with pytest.raises(bridge_rules.RulesError) as info:
        bridge_rules.load(FIXTURES / "several-problems.yaml")
    assert "BR103" in str(info.value)
    assert "(+4 more)" in str(info.value)


def test_non_utf8_bytes_are_located(tmp_path: Path) -> None:
    bad = tmp_path / "latin1.yaml"
    bad.write_bytes(b"bridge-rules: 1\nname: caf\xe9\n")
    with pytest.raises(bridge_rules.RulesError) as info:
        bridge_rules.load(bad)
    (diag,) = info.value.diagnostics
    assert (diag.code, diag.span.line, diag.span.col) == ("BR002", 2, 10)
    assert "0xe9" in diag.message


def test_missing_file_and_directory_without_rules(tmp_path: Path) -> None:
    with pytest.raises(bridge_rules.RulesError) as info:
        bridge_rules.load(tmp_path / "nope.yaml")
    assert [d.code for d in info.value.diagnostics] == ["BR001"]
    with pytest.raises(bridge_rules.RulesError) as info:
        bridge_rules.load(tmp_path)
    assert [d.code for d in info.value.diagnostics] == ["BR001"]


def test_unknown_profile_names_the_known_ones() -> None:
    with pytest.raises(bridge_rules.RulesError) as info:
        bridge_rules.load("pi-anthropic")
    (diag,) = info.value.diagnostics
    assert diag.code == "BR008"
    assert diag.hint is not None
    assert "pi-anthropic-messages" in diag.hint


def test_oversized_file_is_refused_before_parsing(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_bytes(b"bridge-rules: 1\n" + b"# padding\n" * 500_000)
    with pytest.raises(bridge_rules.RulesError) as info:
        bridge_rules.load(big)
    assert [d.code for d in info.value.diagnostics] == ["BR010"]
