from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "e2e"))

pytest.importorskip("claude_agent_sdk", reason="the claude-code extra is not installed")
