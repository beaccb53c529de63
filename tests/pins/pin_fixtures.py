"""Paths the pin tests share (a module of its own: ``conftest`` is a name every test dir has)."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
FAKE_AGENT = HERE / "fake_agent.py"
