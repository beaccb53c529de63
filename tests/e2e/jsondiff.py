"""Where two JSON documents differ, as paths: the structural diff oracle of the model tests.

Written without bridge-rules: a dict compares key by key, a list element by element when
both have the same length (else the list itself differs), anything else by equality. The
tests compare the set of differing paths with the paths the rules name.
"""

from __future__ import annotations

from typing import Any

Path = tuple[str | int, ...]


def differences(a: Any, b: Any, at: Path = ()) -> set[Path]:
    if isinstance(a, dict) and isinstance(b, dict):
        out: set[Path] = set()
        for key in a.keys() | b.keys():
            if key not in a or key not in b:
                out.add((*at, key))
            else:
                out |= differences(a[key], b[key], (*at, key))
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return {at}
        out = set()
        for index, (x, y) in enumerate(zip(a, b, strict=True)):
            out |= differences(x, y, (*at, index))
        return out
    return set() if a == b and type(a) is type(b) else {at}


def within(found: set[Path], allowed: set[Path]) -> set[Path]:
    """The differences no allowed path covers (each allowed path covers what is under it)."""
    return {p for p in found if not any(p[: len(q)] == q for q in allowed)}
