"""Tool schemas made acceptable by a target API, and call arguments carried across.

``convert`` is the engine (:mod:`.convert`), ``targets`` names the operations of
each target, ``shape`` moves arguments between the agent's schema and the wire's,
``rejects`` says what a target would refuse, and ``book`` memoises conversions
for a compiled rule set. docs/schemas.md describes the rules and operations.
"""

from __future__ import annotations

from bridge_rules.schemas.convert import Change, Conversion, convert
from bridge_rules.schemas.shape import IDENTITY, Shape
from bridge_rules.schemas.targets import (
    DEFAULT_TARGET,
    OPERATIONS,
    TARGETS,
    Profile,
    name_letter_first,
    name_problem,
    profile,
)

__all__ = [
    "DEFAULT_TARGET",
    "IDENTITY",
    "OPERATIONS",
    "TARGETS",
    "Change",
    "Conversion",
    "Profile",
    "Shape",
    "convert",
    "name_letter_first",
    "name_problem",
    "profile",
]
