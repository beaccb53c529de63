from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pytest
from pi_driver import PiInstallError, install_pi
from proxy_fixtures import upstream

__all__ = ["pi", "upstream"]


@pytest.fixture(scope="session")
def pi(root: Path) -> Path:
    """The real pi CLI, installed with npm on first use (node, npm and the registry)."""
    try:
        return install_pi(root / ".e2e" / "pi")
    except PiInstallError as exc:
        pytest.fail(str(exc))
