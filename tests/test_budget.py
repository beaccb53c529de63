"""The Hypothesis budgets: CI runs each property's examples as written, the dev loop a share."""

from __future__ import annotations

from collections.abc import Iterator

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
