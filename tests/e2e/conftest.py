from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from proxy_fixtures import upstream
from toolchain import cache_dir

__all__ = ["npm_cache", "upstream"]


@pytest.fixture(scope="session")
def npm_cache() -> Path:
    """The agents' npm packages: one cache outside the clone, shared by every run."""
    return cache_dir()
