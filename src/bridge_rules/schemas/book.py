"""The conversions one compiled rule set has made, memoised by schema bytes.

A request's ``tools[]`` are converted for the target on the way out; the same
schema bytes always give the same conversion, so each distinct schema is
converted once per rule set. The way back (and history replay) needs the shape
of the schema a tool was last sent with, kept here by local tool name. The memo
only ever gains whole entries or is emptied; an entry never changes a byte.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from bridge_rules.jsonio import dumps
from bridge_rules.schemas.convert import Conversion, convert
from bridge_rules.schemas.shape import Shape
from bridge_rules.schemas.targets import Profile

MEMO_LIMIT = 4096
"""Distinct schemas remembered before the memo starts again (a bound, not a tuning knob)."""


class SchemaBook:
    """Conversions for one profile; safe to share between threads (whole-entry writes)."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self._memo: dict[bytes, Conversion] = {}
        self.shapes: dict[str, Shape] = {}
        """Local tool name -> the shape of its last converted schema, where it is not the
        identity (so a lookup miss means arguments cross unchanged)."""

    def conversion(self, schema: Any) -> Conversion:
        try:
            key = dumps(schema)
        except (TypeError, ValueError):
            return convert(schema, self.profile)
        done = self._memo.get(key)
        if done is None:
            if len(self._memo) >= MEMO_LIMIT:
                self._memo = {}
            done = self._memo[key] = convert(schema, self.profile)
        return done

    def wire(self, local: str, schema: Any) -> Any:
        """The schema ``local`` is sent with; remembers how its calls come back."""
        done = self.conversion(schema)
        if done.shape.identity:
            self.shapes.pop(local, None)
        else:
            self.shapes[local] = done.shape
        return done.schema

    def adopt(self, shapes: Iterable[tuple[str, Shape | None]]) -> None:
        """Make ``shapes`` (one request's tools, as converted) the current ones."""
        for local, shape in shapes:
            if shape is None:
                self.shapes.pop(local, None)
            else:
                self.shapes[local] = shape

    def restore(self, local: str, arguments: Any) -> Any:
        shape = self.shapes.get(local)
        return arguments if shape is None else shape.restore(arguments)

    def forward(self, local: str, arguments: Any) -> Any:
        shape = self.shapes.get(local)
        return arguments if shape is None else shape.forward(arguments)
