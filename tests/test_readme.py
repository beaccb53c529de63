"""The README opens with what, who and why, then the two commands; CI runs the README's test
command verbatim; every relative link in the README and docs/ points at a file that exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = sorted([ROOT / "README.md", ROOT / "benchmarks" / "README.md", *ROOT.glob("docs/**/*.md")])


def _readme_commands() -> list[str]:
    return re.findall(r"```sh\n(.+?)\n```", README, flags=re.S)[:2]


def test_readme_opens_with_three_sentences_then_two_one_line_commands() -> None:
    head = README.split("\n## ", 1)[0]
    assert head.count("```sh") == 2
    intro = head.split("```sh", 1)[0].split("\n", 1)[1]
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", " ".join(intro.split())) if s]
    assert len(sentences) == 3, sentences
    install, test = _readme_commands()
    assert "\n" not in install
    assert "\n" not in test
    assert "pip install" in install
    assert "bridge-rules explain" in install
    assert "bridge-rules transform" in install
    assert "examples/" in install
    assert ".[dev]" in test
    assert "pytest" in test


def test_ci_runs_the_readme_test_command() -> None:
    _, test = _readme_commands()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert ci.rstrip("\n").splitlines()[-1] == test


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_resolve(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if "://" in target:
            continue
        assert (doc.parent / target).exists(), f"{doc.name}: {target}"


def _section(title: str) -> str:
    return README.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_readme_summarises_performance_and_has_troubleshooting_and_an_opencode_start() -> None:
    performance = _section("Performance")
    assert "|" not in performance  # the tables live in benchmarks/README.md
    assert "benchmarks/README.md#targets" in performance
    assert "| target | status |" in (ROOT / "benchmarks" / "README.md").read_text("utf-8")
    table = [line for line in _section("Troubleshooting").splitlines() if line.startswith("| ")]
    assert len(table) - 1 >= 5, "the five errors users meet first, each with its fix"
    opencode = _section("opencode in two minutes")
    assert "--rules opencode" in opencode
    assert '"baseURL": "http://127.0.0.1:8787/v1"' in opencode


def test_install_instructions_name_only_tags_the_repository_has() -> None:
    """A ``@vX`` or ``rev: vX`` the repository lacks fails every install that copies it."""
    import subprocess

    done = subprocess.run(
        ["git", "tag", "--list"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        pytest.skip("not a git checkout")
    tags = set(done.stdout.split())
    pages = [README, (ROOT / "CHANGELOG.md").read_text("utf-8")]
    pages += [p.read_text("utf-8") for p in DOCS]
    used = {t for page in pages for t in re.findall(r"(?:@|rev: )(v\d+\.\d+\.\d+)\b", page)}
    assert used <= tags, f"install instructions name tags the repository lacks: {used - tags}"
