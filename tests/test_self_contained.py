"""The suite runs from a fresh clone: it reads nothing outside the repository, and every test
that needs node or npm carries the ``e2e`` marker so that ``pytest -m "not e2e"`` skips it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
SOURCES = sorted(p for p in TESTS.rglob("*.py") if p.name != Path(__file__).name)

# A string that reaches the reference material beside the checkout, or an absolute /work path.
OUTSIDE = re.compile(r"""["'](\.\./)+shared\b|["']/work/|["']shared["']""")
# What a test needs node or npm for: an agent driver (pi, opencode), npm, node or npx.
# (test_npm_install.py calls the installer itself, against a fake npm on PATH.)
NEEDS_NODE = re.compile(r"""\b\w+_driver\b|which\(\s*["'](npm|node|npx)["']""")


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(TESTS).as_posix())
def test_reads_nothing_outside_the_repository(path: Path) -> None:
    assert not OUTSIDE.search(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    "path",
    [p for p in SOURCES if p.name.startswith("test_")],
    ids=lambda p: p.relative_to(TESTS).as_posix(),
)
def test_tests_that_need_node_are_marked_e2e(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    if NEEDS_NODE.search(text):
        assert "pytestmark = pytest.mark.e2e" in text
