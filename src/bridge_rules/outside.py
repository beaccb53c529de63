"""Whether ``extends`` may leave the extending file's directory tree: one process-wide switch.

A module of its own, with nothing heavy to import, so the CLI can set it on every run
without loading the rule model (``compose`` reads it when it loads rules).
"""

from __future__ import annotations

import os

ALLOW_OUTSIDE_ENV = "BRIDGE_RULES_ALLOW_OUTSIDE"

_SETTINGS = {"allow_outside": False}


def set_allow_outside(allowed: bool) -> None:
    """``bridge-rules --allow-outside``: the default for every later load in this process."""
    _SETTINGS["allow_outside"] = allowed


def allow_outside_default() -> bool:
    """Whether ``extends`` may leave the extending file's directory tree: the CLI's
    ``--allow-outside``, or ``BRIDGE_RULES_ALLOW_OUTSIDE=1``."""
    return _SETTINGS["allow_outside"] or os.environ.get(ALLOW_OUTSIDE_ENV, "") == "1"
