"""Every pin test runs in an empty directory with an empty user data dir and no --pins."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bridge_rules.pins import use_dirs


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data-home"))
    monkeypatch.delenv("BRIDGE_RULES_PINS", raising=False)
    use_dirs([])
    yield work
    use_dirs([])
