"""The deploy tests share the fake upstream of tests/e2e."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "e2e"))

from proxy_fixtures import upstream

__all__ = ["upstream"]
