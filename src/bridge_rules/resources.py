"""Where the shipped rule files, profiles and pinned schemas live.

In a wheel they are copied to ``bridge_rules/_data``; in a source checkout
(editable install, tests) they are read from the repository's ``rules/`` and
``schemas/`` directories, so there is a single copy to edit.
"""

from __future__ import annotations

import functools
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


@functools.cache
def data_dir(name: str) -> Path:
    """``rules`` or ``schemas``: the packaged copy if present, else the checkout's."""
    packaged = _PACKAGE_DIR / "_data" / name
    if packaged.is_dir():
        return packaged
    return _PACKAGE_DIR.parent.parent / name


def display_root() -> Path:
    """What shipped rule files are shown relative to when they are not under the current
    directory: the directory holding the ``bridge_rules`` package in a wheel (so a trace says
    ``bridge_rules/_data/rules/default.yaml``, not a long site-packages path), the checkout
    otherwise (``rules/default.yaml``)."""
    if (_PACKAGE_DIR / "_data").is_dir():
        return _PACKAGE_DIR.parent
    return _PACKAGE_DIR.parent.parent


def rules_dir() -> Path:
    return data_dir("rules")


def schemas_dir() -> Path:
    return data_dir("schemas")


DEFAULT_PROFILE = "default"


def profile_path(name: str) -> Path | None:
    """The file of a packaged profile, or None if there is no such profile."""
    if name == DEFAULT_PROFILE:
        candidate = rules_dir() / "default.yaml"
    else:
        candidate = rules_dir() / "profiles" / f"{name}.yaml"
    return candidate if candidate.is_file() else None


def profile_names() -> list[str]:
    names = [DEFAULT_PROFILE] if (rules_dir() / "default.yaml").is_file() else []
    profiles = rules_dir() / "profiles"
    if profiles.is_dir():
        names += sorted(p.stem for p in profiles.glob("*.yaml"))
    return names
