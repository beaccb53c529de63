"""Refused keywords said on the wire in words the target takes, where that is exact.

``describe-refused`` moves a keyword the target refuses into the description, which only
asks the model; these keep the constraint where another keyword says the same thing, so
the model cannot send a call the agent's schema refuses.
"""

from __future__ import annotations

from typing import Any

from bridge_rules.schemas.merge import Note
from bridge_rules.schemas.shape import kinds
from bridge_rules.schemas.targets import Profile

MAX_PATTERN_LENGTH = 1000
"""The longest ``minLength`` written as a pattern (a larger one only goes in words)."""


def exclusive_integers(p: Profile, s: dict[str, Any], ptr: str, note: Note) -> None:
    """An exclusive bound on integers the target refuses, written as the inclusive one
    next to it (``exclusiveMinimum: 0`` is ``minimum: 1``): the same values, exactly."""
    if kinds(s) - {"null"} != {"integer"}:
        return
    for key, bound, step in (
        ("exclusiveMinimum", "minimum", 1),
        ("exclusiveMaximum", "maximum", -1),
    ):
        value = s.get(key)
        if (
            isinstance(value, int)
            and not isinstance(value, bool)
            and p.refused(key, value)
            and not p.refused(bound, value)
        ):
            inclusive: float = value + step
            held = s.get(bound)
            if isinstance(held, (int, float)) and not isinstance(held, bool):
                inclusive = max(inclusive, held) if step > 0 else min(inclusive, held)
            s[bound] = inclusive
            del s[key]
            note("describe-refused", ptr, f"{key} {value} written as {bound} {inclusive}")


def min_length_pattern(p: Profile, s: dict[str, Any], ptr: str, note: Note) -> None:
    """A ``minLength`` the target refuses, on a string without a pattern, said as the
    pattern ``^[\\s\\S]{n,}`` too: the model then cannot send a shorter string, where
    the description alone would only ask it not to."""
    low = s.get("minLength")
    if (
        isinstance(low, int)
        and not isinstance(low, bool)
        and 0 < low <= MAX_PATTERN_LENGTH
        and "pattern" not in s
        and kinds(s) <= {"string", "null"}
        and p.refused("minLength", low)
        and not p.refused("pattern", "")
    ):
        s["pattern"] = "^[\\s\\S]{" + str(low) + ",}"
        note("describe-refused", ptr, "minLength also written as a pattern")
