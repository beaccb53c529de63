"""The conversions one compiled rule set has made, memoised by schema bytes.

A request's ``tools[]`` are converted for the target on the way out; the same
schema bytes always give the same conversion, so each distinct schema is
converted once per rule set (values that write alike, NaN and null, are told apart by
the entry's own schema). The memo only ever gains whole entries or is
emptied; an entry never changes a byte. What a request's calls need to come back
(the :class:`~bridge_rules.schemas.shape.Shape` of each tool it sent) belongs to
that request, never to the book: a worker keeps nothing that changes an answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bridge_rules.jsonio import dumps
from bridge_rules.schemas.convert import Conversion, convert
from bridge_rules.schemas.shape import Shape
from bridge_rules.schemas.targets import Profile

MEMO_LIMIT = 4096
"""Distinct schemas remembered before the memo starts again (a bound, not a tuning knob)."""

Shapes = Mapping[str, Shape]
"""A request's tools whose schema conversion changes what the model sends: local name ->
how their calls cross it. A tool not in it crosses unchanged."""


class SchemaBook:
    """Conversions for one profile, memoised; safe to share between threads (whole-entry
    writes), and holding nothing that depends on a request."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self._memo: dict[bytes, Conversion] = {}

    def conversion(self, schema: Any) -> Conversion:
        return self.keyed(schema)[1]

    def keyed(self, schema: Any) -> tuple[bytes | None, Conversion]:
        """The schema's bytes (None when it has none) and its conversion."""
        try:
            key = dumps(schema)
        except (TypeError, ValueError):
            return None, convert(schema, self.profile)
        done = self._memo.get(key)
        if done is not None and b"null" in key and done.original != schema:
            # NaN and the infinities write as null too (a library caller's values, never a
            # parsed body's): such a schema is not the one the entry was made from, though
            # its bytes are, and gets its own conversion.
            return key, convert(schema, self.profile)
        if done is None:
            if len(self._memo) >= MEMO_LIMIT:
                self._memo = {}
            done = self._memo[key] = convert(schema, self.profile)
        return key, done


def restore(shapes: Shapes | None, local: str, arguments: Any) -> Any:
    """A call's arguments back in the agent's shape (as they were before the conversion)."""
    shape = None if shapes is None else shapes.get(local)
    return arguments if shape is None else shape.restore(arguments)


def forward(shapes: Shapes | None, local: str, arguments: Any) -> Any:
    """A call from the agent's history in the shape its converted schema asks for."""
    shape = None if shapes is None else shapes.get(local)
    return arguments if shape is None else shape.forward(arguments)
