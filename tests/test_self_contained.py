"""The suite runs from a fresh clone: it reads nothing outside the repository, every test
that installs and drives an agent CLI carries the ``e2e`` marker so that ``pytest -m "not e2e"``
skips it, and node, npm and rg come from the venv's dev extras, never from the machine."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
SOURCES = sorted(p for p in TESTS.rglob("*.py") if p.name != Path(__file__).name)

# A string that reaches the reference material beside the checkout, or an absolute /work path.
OUTSIDE = re.compile(r"""["'](\.\./)+shared\b|["']/work/|["']shared["']""")
# A test that downloads an agent from the registry and runs it goes through its driver.
# (test_npm_install.py calls the installer itself, against a fake npm.)
NEEDS_REGISTRY = re.compile(r"\b\w+_driver\b")
# A lookup on whatever PATH the machine has: tests/e2e/toolchain.py takes them from the venv.
SYSTEM_TOOL = re.compile(r"""which\(\s*["'](npm|node|npx|rg)["']""")


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(TESTS).as_posix())
def test_reads_nothing_outside_the_repository(path: Path) -> None:
    assert not OUTSIDE.search(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    "path",
    [p for p in SOURCES if p.name.startswith("test_")],
    ids=lambda p: p.relative_to(TESTS).as_posix(),
)
def test_tests_that_drive_an_agent_are_marked_e2e(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    if NEEDS_REGISTRY.search(text):
        assert "pytestmark = pytest.mark.e2e" in text


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(TESTS).as_posix())
def test_node_npm_and_rg_are_never_looked_up_on_the_machines_path(path: Path) -> None:
    assert not SYSTEM_TOOL.search(path.read_text(encoding="utf-8"))
