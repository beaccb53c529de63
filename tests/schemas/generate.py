"""Calls generated from a schema by ``hypothesis-jsonschema``: an oracle that shares none of
the converter's assumptions about which values a schema allows.

hypothesis-jsonschema 0.23.1 (its latest release) draws objects through
``hypothesis.internal.conjecture.utils.many.more()``, which Hypothesis has since replaced
by iterating inside ``with many(...)``. ``_Many`` gives it the old method over the new
class's own steps, so the generator runs on the Hypothesis this project pins; it is
applied only when ``more`` is missing, and only to hypothesis-jsonschema's module.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import hypothesis_jsonschema._from_schema as _impl
from hypothesis import strategies as st
from hypothesis.internal.conjecture import utils as cu
from hypothesis_jsonschema import from_schema


class _Many(cu.many):
    """``many`` with the ``more()`` loop hypothesis-jsonschema calls."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._depth = self.data.depth
        self._iterated = True

    def more(self) -> bool:
        self._finish_element()
        if not self._decide():
            return False
        self.count += 1
        self._in_element = True
        self._rejected = False
        return True


if not hasattr(cu.many, "more"):
    _impl.cu = SimpleNamespace(many=_Many)  # type: ignore[attr-defined,assignment]


def calls(schema: Any) -> st.SearchStrategy[Any]:
    """Every value ``schema`` (JSON Schema 2020-12 or draft 7) allows, as Hypothesis draws."""
    return from_schema(schema)
