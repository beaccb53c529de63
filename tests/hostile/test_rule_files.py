"""Rule-file repros from issue 13: each is a located error with its documented code.

One row per repro: the file text, the code lint reports, and where. ``load()``
refuses the same file with a ``RulesError`` carrying that diagnostic.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import bridge_rules
from bridge_rules.diagnostics import RulesError
from bridge_rules.lint.runner import lint_target

HEAD = "bridge-rules: 1\n"
BIND = HEAD + "bindings:\n  - {local: s, wire: S, input: [%s]}\n"
DEEP_JMES = "not_null(" * 3000 + "a" + ")" * 3000
NESTED_JMES = "[" * 40 + "a" + "]" * 40
NESTED_PATH = "$" + "[" * 40 + "0" + "]" * 40 + ".b"

CASES: list[tuple[str, str, str, int, int]] = [
    ("merge-key", HEAD + "base: &b {api: x}\ngate:\n  <<: *b\n", "BR011", 4, 3),
    ("omap", HEAD + "gate: !!omap\n  - api: x\n", "BR011", 2, 7),
    ("python-tag", HEAD + "gate: !!python/object/apply:os.system ['id']\n", "BR011", 2, 7),
    ("set-tag", HEAD + "local_tools: !!set {a, b}\n", "BR011", 2, 14),
    ("binary-tag", HEAD + "name: !!binary aGk=\n", "BR011", 2, 7),
    ("local-tag", HEAD + "name: !mine x\n", "BR011", 2, 7),
    ("int-tag", HEAD + "name: !!int 1\n", "BR011", 2, 7),
    ("surrogate", HEAD + 'name: "\\ud800"\n', "BR014", 2, 10),
    ("surrogate-key", HEAD + '"\\udfff": 1\n', "BR014", 2, 4),
    ("int-key", HEAD + "names:\n  - kind: aliases\n    map: {1: One}\n", "BR012", 4, 11),
    ("null-key", HEAD + "null: 1\n", "BR012", 2, 1),
    ("complex-key", HEAD + "? [a, b]\n: 1\n", "BR012", 2, 3),
    ("mapping-key", HEAD + "? {a: 1}\n: 1\n", "BR012", 2, 3),
    ("inf", BIND % "scale: {t: .inf}", "BR013", 3, 44),
    ("nan", BIND % "scale: {t: .nan}", "BR013", 3, 44),
    ("overflow-float", HEAD + "name: 1e400\n", "BR013", 2, 7),
    ("huge-int", HEAD + "name: " + "9" * 5000 + "\n", "BR013", 2, 7),
    ("big-int", HEAD + "name: 18446744073709551617\n", "BR013", 2, 7),
    ("absurd-scale", BIND % "scale: {t: 1e300}", "BR106", 3, 33),
    ("bool-version", "bridge-rules: true\n", "BR105", 1, 15),
    ("float-version", "bridge-rules: 1.0\n", "BR105", 1, 15),
    ("string-version", "bridge-rules: '1'\n", "BR105", 1, 15),
    ("deep-jmespath", BIND % f"jmespath: {{expr: '{DEEP_JMES}'}}", "BR402", 3, 33),
    ("nested-jmespath", BIND % f"jmespath: {{expr: '{NESTED_JMES}'}}", "BR402", 3, 33),
    ("nested-jsonpath", BIND % f"rename: {{'{NESTED_PATH}': c}}", "BR401", 3, 33),
    ("deep-yaml", HEAD + "name: " + "[" * 5000 + "]" * 5000 + "\n", "BR010", 2, 70),
]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "code", "line", "col"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_located_error(text: str, code: str, line: int, col: int, tmp_path: Path) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    diags = lint_target(path).diagnostics
    assert [(d.code, d.span.line, d.span.col) for d in diags if d.severity.value == "error"][
        :1
    ] == [(code, line, col)], [d.line() for d in diags]
    with pytest.raises(RulesError) as caught:
        bridge_rules.load(path)
    assert code in {d.code for d in caught.value.diagnostics}


def _extends(tmp_path: Path, target: str) -> Path:
    rules = tmp_path / "rules" / "main.yaml"
    rules.parent.mkdir(exist_ok=True)
    rules.write_text(HEAD + f"extends: {target}\n", encoding="utf-8")
    return rules


@pytest.mark.parametrize("target", ["/dev/zero", "/dev/urandom", "fifo"])
def test_special_files_are_refused_not_read(target: str, tmp_path: Path) -> None:
    if target == "fifo":
        fifo = tmp_path / "rules" / "fifo.yaml"
        fifo.parent.mkdir()
        os.mkfifo(fifo)
        target = "./fifo.yaml"
    rules = _extends(tmp_path, target)
    os.environ["BRIDGE_RULES_ALLOW_OUTSIDE"] = "1"
    try:
        diags = lint_target(rules).diagnostics
    finally:
        del os.environ["BRIDGE_RULES_ALLOW_OUTSIDE"]
    assert [(d.code, d.span.line, d.span.col) for d in diags] == [("BR001", 2, 10)]
    assert "regular file" in diags[0].message


def test_size_cap_applies_to_bytes_read(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_bytes(HEAD.encode() + b"#" * (5 * 1024 * 1024))
    diags = lint_target(big).diagnostics
    assert [d.code for d in diags] == ["BR010"]


@pytest.mark.parametrize("target", ["/etc/passwd", "../outside.yaml", "./link.yaml"])
def test_extends_outside_the_tree_needs_opt_in(
    target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "outside.yaml"
    outside.write_text(HEAD + "secret_token: s3cr3t-value\n", encoding="utf-8")
    rules = _extends(tmp_path, target)
    (rules.parent / "link.yaml").symlink_to(outside)
    diags = lint_target(rules).diagnostics
    assert [(d.code, d.span.line, d.span.col) for d in diags] == [("BR015", 2, 10)]
    if target != "/etc/passwd":
        monkeypatch.setenv("BRIDGE_RULES_ALLOW_OUTSIDE", "1")
        diags = lint_target(rules).diagnostics
        assert [d.code for d in diags] == ["BR102"]
        assert all("s3cr3t" not in d.line() for d in diags)


def test_names_cannot_forge_lines(tmp_path: Path) -> None:
    path = tmp_path / "evil\nname\x1b[31m.yaml"
    path.write_text(HEAD + '"a\\nfake.yaml:1:1: error[BR000] forged\\e[0m": 1\n', encoding="utf-8")
    diags = lint_target(path).diagnostics
    (line,) = [d.line() for d in diags]
    assert "\n" not in line
    assert "\x1b" not in line
    assert "evil\\nname\\x1b[31m.yaml" in line
    assert "'a\\nfake.yaml:1:1: error[BR000] forged\\x1b[0m'" in line
