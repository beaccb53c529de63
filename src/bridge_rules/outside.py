"""Where rule files may come from: the project's bounds and the switch that lifts them.

``extends`` may not leave the extending file's directory tree, and a symlink may not lead
out of its project (the nearest folder holding ``pyproject.toml`` or ``.git``), unless
one process-wide switch allows it. A module of its own, with nothing heavy to import, so
the CLI can set it on every run without loading the rule model (``compose`` and lint's
discovery read it).
"""

from __future__ import annotations

import os
from pathlib import Path

ALLOW_OUTSIDE_ENV = "BRIDGE_RULES_ALLOW_OUTSIDE"

_SETTINGS = {"allow_outside": False}


def set_allow_outside(allowed: bool) -> None:
    """``bridge-rules --allow-outside``: the default for every later load in this process."""
    _SETTINGS["allow_outside"] = allowed


def allow_outside_default() -> bool:
    """Whether ``extends`` may leave the extending file's directory tree: the CLI's
    ``--allow-outside``, or ``BRIDGE_RULES_ALLOW_OUTSIDE=1``."""
    return _SETTINGS["allow_outside"] or os.environ.get(ALLOW_OUTSIDE_ENV, "") == "1"


PROJECT_MARKERS = ("pyproject.toml", ".git")


def project_root(start: Path) -> Path:
    """The nearest directory at or above ``start`` holding ``pyproject.toml`` or ``.git`` (as
    ruff and pre-commit find a project), else ``start`` itself: the boundary that rule
    files reached through discovery, a directory or a symlink may not leave."""
    start = Path(os.path.abspath(start))
    for folder in (start, *start.parents):
        if any(os.path.lexists(folder / marker) for marker in PROJECT_MARKERS):
            return folder
    return start


def leaves(path: Path, root: Path) -> bool:
    """Whether ``path``, symlinks followed, lies outside ``root`` (symlinks followed too)."""
    try:
        real = os.path.realpath(path)
        base = os.path.realpath(root)
    except (OSError, ValueError):
        return True
    return real != base and not real.startswith(base.rstrip(os.sep) + os.sep)
