"""The Hypothesis budgets: CI runs each property's examples as written, the dev loop a share."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings
from tests.budget import examples


@pytest.fixture
def profile() -> Iterator[None]:
    current = settings.get_current_profile_name()
    yield
    settings.load_profile(current)


def test_ci_runs_every_example_as_written(profile: None) -> None:
    settings.load_profile("ci")
    assert [examples(n) for n in (15, 60, 150, 300)] == [15, 60, 150, 300]
    assert settings.default.print_blob


def test_dev_runs_a_quarter_and_never_fewer_than_ten(profile: None) -> None:
    settings.load_profile("dev")
    assert [examples(n) for n in (15, 60, 150, 300)] == [10, 15, 37, 75]


FIXED = re.compile(r"max_examples\s*=\s*\d")


@pytest.mark.parametrize("folder", ["hostile", "core", "lint", "lsp"])
def test_every_property_takes_its_budget_from_the_profile(folder: str) -> None:
    """A fixed ``max_examples=N`` runs N under every profile: the deep profile then searches
    no further than CI (five properties here did). The other folders still hold some."""
    here = Path(__file__).resolve().parent / folder
    fixed = [
        f"{path.relative_to(here.parent)}:{number}"
        for path in sorted(here.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if FIXED.search(line)
    ]
    assert fixed == [], "write max_examples=examples(N) (tests/budget.py)"
