"""The registry of argument operations: the one list that names them.

The compiler, ``explain`` and lint reach an operation only through here, by the key it
is written under, so a new operation is its class (with its rule-format model) and one
entry below. The list must cover the rule format exactly (every model declared in
:mod:`bridge_rules.model_ops`, no other): checked when this module loads, so a model
without behaviour, or behaviour without a model, never ships.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from bridge_rules import model_bindings as mb
from bridge_rules.bindings.ops.base import Compiled, Operation
from bridge_rules.bindings.ops.computed import Each, Jmespath
from bridge_rules.bindings.ops.fields import Rename, Unwrap, Wrap
from bridge_rules.bindings.ops.lists import Merge, Split
from bridge_rules.bindings.ops.presence import Coalesce, Copy, Default, Drop, Keep, Prefer
from bridge_rules.bindings.ops.values import Coerce, Scale, Values

OPERATIONS: tuple[type[Operation[Any]], ...] = (
    Rename,
    Wrap,
    Unwrap,
    Merge,
    Split,
    Prefer,
    Coalesce,
    Coerce,
    Scale,
    Default,
    Drop,
    Keep,
    Jmespath,
    Copy,
    Values,
    Each,
)

REGISTRY: dict[str, type[Operation[Any]]] = {op.kind(): op for op in OPERATIONS}
"""Each operation by the key it is written under."""


def _check(registry: dict[str, type[Operation[Any]]]) -> None:
    declared = {kind: op.model for kind, op in registry.items()}
    if len(declared) != len(OPERATIONS) or declared != mb.OP_MODELS:
        raise RuntimeError(
            "argument operations and their rule-format models disagree: registered "
            f"{sorted(declared)}, models {sorted(mb.OP_MODELS)}"
        )


_check(REGISTRY)


def operation_of(op: BaseModel) -> type[Operation[Any]]:
    return REGISTRY[mb.op_kind(op)]


def compile_op(op: BaseModel) -> Compiled:
    """Compile one operation model; raises :class:`OpError` for a bad path or expression."""
    return operation_of(op).compile(mb.op_spec(op), compile_op)


def loses(op: BaseModel) -> bool:
    """Whether replay may not give back what ``op`` changed (it, or one written inside it)."""
    kind = operation_of(op)
    return kind.loses or any(loses(inner) for inner in kind.nested(mb.op_spec(op)))
