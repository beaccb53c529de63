"""Every lint check, found by importing each module of ``bridge_rules.lint.checks``.

Kept apart from the registry API so check modules (which import the registry)
and the code that collects them do not import each other.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil

from bridge_rules.lint import checks
from bridge_rules.lint.registry import REGISTRY, Check


@functools.cache
def load_checks() -> tuple[Check, ...]:
    """Import every module of ``bridge_rules.lint.checks`` and return the registry, by name."""
    for info in sorted(pkgutil.iter_modules(checks.__path__), key=lambda i: i.name):
        importlib.import_module(f"{checks.__name__}.{info.name}")
    return tuple(REGISTRY[name] for name in sorted(REGISTRY))
