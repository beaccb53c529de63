"""Fixtures shared by tests/proxy and tests/e2e (imported by both conftest files)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fake_upstream import FakeUpstream


@pytest.fixture
def upstream() -> Iterator[FakeUpstream]:
    with FakeUpstream() as server:
        yield server
