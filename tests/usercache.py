"""The machine's cache directory for what the tests keep between runs, outside any clone:
``$XDG_CACHE_HOME/bridge-rules``, else ``~/.cache/bridge-rules``."""

from __future__ import annotations

import os
from pathlib import Path


def user_cache() -> Path:
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "bridge-rules"
