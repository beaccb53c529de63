"""The round-trip law as data: a call beside its replay, field by field, each difference
with the binding's declaration (``losses:``) that allows it, if any.

History replay must give back what was sent: wire -> local -> wire for a model's call,
local -> wire -> local for an agent's. ``explain --args`` prints these differences and the
property tests (``tests/bindings/test_roundtrip*.py``) fail on any that no loss declares.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from bridge_rules.bindings.ops import exact_number
from bridge_rules.model_bindings import Loss

Side = Literal["wire", "local"]


class _Absent:
    def __repr__(self) -> str:
        return "(absent)"


ABSENT: Any = _Absent()
"""A field missing on one side of a difference."""


def same_json(sent: Any, back: Any) -> bool:
    """Equal JSON values with equal JSON types: an int stays an int, a bool a bool; a float
    may come back as the int of exactly its value (JSON has one number: ``2000.0`` is 2000)."""
    if isinstance(sent, bool) or isinstance(back, bool):
        return type(sent) is type(back) and sent == back
    if isinstance(sent, int):
        return type(back) is int and sent == back
    if isinstance(sent, float):
        exact = exact_number(sent)
        if exact is None:  # inf or nan: only itself
            return isinstance(back, float) and repr(back) == repr(sent)
        return exact_number(back) == exact
    if isinstance(sent, dict):
        return (
            isinstance(back, dict)
            and sent.keys() == back.keys()
            and all(same_json(v, back[k]) for k, v in sent.items())
        )
    if isinstance(sent, list):
        return (
            isinstance(back, list)
            and len(sent) == len(back)
            and all(same_json(a, b) for a, b in zip(sent, back, strict=True))
        )
    return type(sent) is type(back) and sent == back


def _same_items(sent: Any, back: Any) -> bool:
    if not (isinstance(sent, list) and isinstance(back, list)) or len(sent) != len(back):
        return False
    rest = list(back)
    for item in sent:
        hit = next((i for i, b in enumerate(rest) if same_json(item, b)), None)
        if hit is None:
            return False
        del rest[hit]
    return True


def declared(losses: Iterable[Loss], side: Side, original: Any, field: str) -> Loss | None:
    """The declaration that allows ``field`` to differ after a round trip from ``side``."""
    keys = original if isinstance(original, dict) else {}
    for loss in losses:
        if loss.side not in (side, "both") or not all(w in keys for w in loss.when):
            continue
        if "*" in loss.fields or field in loss.fields:
            return loss
    return None


@dataclass(frozen=True)
class Difference:
    field: str
    """A top-level field, or ``*`` when the arguments are not both objects."""
    sent: Any
    back: Any
    loss: Loss | None
    """The declaration that allows it; None: the law is broken."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "field": self.field,
            "sent": None if self.sent is ABSENT else self.sent,
            "sent_absent": self.sent is ABSENT,
            "replayed": None if self.back is ABSENT else self.back,
            "replayed_absent": self.back is ABSENT,
            "declared": None if self.loss is None else self.loss.why,
        }

    def describe(self) -> str:
        def show(value: Any) -> str:
            return "(absent)" if value is ABSENT else json.dumps(value, ensure_ascii=False)

        verdict = f"declared: {self.loss.why}" if self.loss else "NOT DECLARED"
        return f"{self.field}: sent {show(self.sent)}, replayed {show(self.back)} ({verdict})"


def differences(losses: Sequence[Loss], side: Side, original: Any, back: Any) -> list[Difference]:
    """Every top-level field that did not come back as sent, with what allows it."""
    if not (isinstance(original, dict) and isinstance(back, dict)):
        if same_json(original, back):
            return []
        return [Difference("*", original, back, declared(losses, side, original, "*"))]
    out = []
    for key in dict.fromkeys([*original, *back]):
        sent, got = original.get(key, ABSENT), back.get(key, ABSENT)
        if sent is not ABSENT and got is not ABSENT and same_json(sent, got):
            continue
        loss = declared(losses, side, original, key)
        if loss is not None and loss.kind == "order" and not _same_items(sent, got):
            loss = None  # only the order may change
        out.append(Difference(key, sent, got, loss))
    return out
