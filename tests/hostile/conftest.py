"""Fixtures shared by the hostile rule-input cases."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.hostile.cli_kit import HEAD, SECRET, SECRET_KEY


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project (it has ``.git``) as the current directory, with a secret file beside it."""
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / "rules").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "creds.yaml").write_text(HEAD + f"{SECRET_KEY}: {SECRET}\n", encoding="utf-8")
    monkeypatch.chdir(root)
    monkeypatch.delenv("BRIDGE_RULES_ALLOW_OUTSIDE", raising=False)
    return root
