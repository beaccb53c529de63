from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from opencode_driver import SetupError, install_opencode
from pi_driver import PiInstallError, install_pi
from proxy_fixtures import upstream
from toolchain import cache_dir

__all__ = ["npm_cache", "opencode", "pi", "upstream"]


@pytest.fixture(scope="session")
def npm_cache() -> Path:
    """The agents' npm packages: one cache outside the clone, shared by every run."""
    return cache_dir()


@pytest.fixture(scope="session")
def pi(npm_cache: Path) -> Path:
    """The real pi CLI, installed with npm on first use (node, npm and the registry)."""
    try:
        return install_pi(npm_cache)
    except PiInstallError as exc:
        pytest.fail(str(exc))


@pytest.fixture(scope="session")
def opencode(npm_cache: Path) -> Path:
    """The real opencode CLI, installed with npm on first use (node, npm and the registry)."""
    try:
        return install_opencode(npm_cache)
    except SetupError as exc:
        pytest.fail(str(exc))
