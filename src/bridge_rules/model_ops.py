"""The argument operations of the rule format: one strict model each, and their union.

An operation is written as a one-key mapping (``- rename: {file_path: path}``); the key
selects the model, so a typo names the operation it missed. :data:`OP_MODELS` is taken
from the :class:`OpModel` subclasses declared here, once, so every operation's model sits
in this module (``bindings/ops/registry.py`` checks its list against it when it loads).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, populate_by_name=True)


# ------------------------------------------------------------- operations
class Source(_Strict):
    """One field merged into (or split out of) a list, with a prefix marking its items."""

    field: str
    prefix: str = ""


SourceRef = str | Source


def source_of(ref: SourceRef) -> Source:
    return ref if isinstance(ref, Source) else Source(field=ref)


class WrapSpec(_Strict):
    into: str = Field(description="The array field the new object is appended to.")
    fields: dict[str, str] = Field(description="Wire field -> key inside the wrapped object.")


class UnwrapSpec(_Strict):
    from_: str = Field(alias="from", description="The array field holding exactly one object.")
    fields: dict[str, str] = Field(description="Key inside the object -> top-level field.")


class MergeSpec(_Strict):
    into: str
    from_: list[SourceRef] = Field(alias="from", min_length=1)


class SplitSpec(_Strict):
    from_: str = Field(alias="from")
    into: list[SourceRef] = Field(min_length=1)


class CoalesceSpec(_Strict):
    into: str
    from_: list[str] = Field(alias="from", min_length=1)


class JmesSpec(_Strict):
    expr: str = Field(description="A JMESPath expression evaluated on the whole arguments.")
    into: str | None = Field(
        None,
        description="The field that receives the result; omitted: the result replaces "
        "the arguments (it must be an object).",
    )


Coercion = Literal["number", "integer", "boolean", "array", "string"]


class OpModel(_Strict):
    """The rule format of one argument operation: a mapping whose one key names it.

    Declaring a subclass here is what puts an operation into the rule format: every
    subclass, in the order it is declared, joins the :data:`Operation` union (and so the
    generated JSON schema). Its behaviour is declared once, above this layer, by the
    operation class that names this model (``bindings/ops``); the two are checked against
    each other when that registry loads.
    """


class RenameOp(OpModel):
    """Move fields (``from: to``); top-level renames keep key order, the later key wins."""

    rename: dict[str, str]


class WrapOp(OpModel):
    """Top-level fields -> one object appended to an array (Claude Edit -> pi edits[])."""

    wrap: WrapSpec


class UnwrapOp(OpModel):
    """An array of exactly one object -> top-level fields (the inverse of wrap)."""

    unwrap: UnwrapSpec


class MergeOp(OpModel):
    """Several list (or scalar) fields -> one list, each source's items with its prefix."""

    merge: MergeSpec


class SplitOp(OpModel):
    """One list -> several fields by item prefix (the inverse of merge)."""

    split: SplitSpec


class PreferOp(OpModel):
    """``winner: loser``: when the winner is present and not empty, the loser is dropped."""

    prefer: dict[str, str]


class CoalesceOp(OpModel):
    """The first source that is present and not null wins (JavaScript ``??``); the rest go."""

    coalesce: CoalesceSpec


class CoerceOp(OpModel):
    """String values -> number / integer / boolean; a JSON string -> array; unparsable: kept."""

    coerce: dict[str, Coercion]


class ScaleOp(OpModel):
    """Multiply numbers by a factor, wire -> local (ms -> s is ``0.001``)."""

    scale: dict[str, float]

    @field_validator("scale")
    @classmethod
    def _nonzero(cls, value: dict[str, float]) -> dict[str, float]:
        for name, factor in value.items():
            if factor == 0:
                raise ValueError(f"scale factor of '{name}' is 0; the inverse would divide by 0")
            if not math.isfinite(factor) or not 1e-12 <= abs(factor) <= 1e12:
                raise ValueError(f"scale factor of '{name}' must be finite, within 1e-12..1e12")
        return value


class DefaultOp(OpModel):
    """Set fields that are absent."""

    default: dict[str, Any]


class DropOp(OpModel):
    """Remove fields (a list), or remove them only when equal to a value (a mapping)."""

    drop: list[str] | dict[str, Any]


class KeepOp(OpModel):
    """Keep only these fields; every other key is removed (claude-agent-sdk-pi's rebuild)."""

    keep: list[str]


class JmesOp(OpModel):
    """A JMESPath expression for what the other operations cannot say (not invertible)."""

    jmespath: JmesSpec


class CopyOp(OpModel):
    """``source: target``: set the target to a copy of the source when the target is absent."""

    copy_: dict[str, str] = Field(alias="copy")


class ValuesOp(OpModel):
    """``field: {from: to}``: replace a field's value when it equals a key of the table."""

    values: dict[str, dict[str, str | int | float | bool]]


class EachSpec(_Strict):
    in_: str = Field(alias="in", description="The array field whose object items are changed.")
    do: list[Operation] = Field(
        min_length=1, description="Operations applied to each object item, in order."
    )

    @field_validator("do", mode="before")
    @classmethod
    def _shapes(cls, value: Any) -> Any:
        return _check_op_shapes(value)


class EachOp(OpModel):
    """Apply operations to every object item of an array (``todos[*]``); others stay."""

    each: EachSpec


def kind_of(model: type[BaseModel]) -> str:
    """The key an operation is written under (``copy``, although the field is ``copy_``)."""
    field_name, info = next(iter(model.model_fields.items()))
    return info.alias or field_name


def op_kind(op: BaseModel) -> str:
    """The operation's key as written."""
    return kind_of(type(op))


def op_spec(op: BaseModel) -> Any:
    """The value under the operation's key."""
    return getattr(op, next(iter(type(op).model_fields)))


def _op_tag(value: Any) -> str | None:
    if isinstance(value, dict):
        return next(iter(value), None) if len(value) == 1 else None
    if isinstance(value, BaseModel):
        return op_kind(value)
    return None


def operation_union(models: Iterable[type[OpModel]]) -> Any:
    """The discriminated union of ``models``, each tagged with its key (one-key mappings)."""
    members = tuple(Annotated[m, Tag(kind_of(m))] for m in models)
    return Annotated[Union[members], Discriminator(_op_tag)]  # noqa: UP007 (built at runtime)


OP_MODELS: dict[str, type[OpModel]] = {kind_of(m): m for m in OpModel.__subclasses__()}
"""Every operation of the rule format by its key, in declaration order (taken once, here)."""

if TYPE_CHECKING:
    Operation = OpModel
else:
    Operation = operation_union(OP_MODELS.values())


def _check_op_shapes(value: Any, known: Mapping[str, type[BaseModel]] = OP_MODELS) -> Any:
    """Say which operation was meant before the union reports a bare tag error."""
    if not isinstance(value, list):
        return value
    for index, item in enumerate(value):
        if not isinstance(item, dict):
            continue
        if len(item) != 1:
            keys = ", ".join(map(str, item)) or "none"
            raise ValueError(
                f"operation [{index}] must be a mapping with exactly one key naming the "
                f"operation (got: {keys})"
            )
        key = str(next(iter(item)))
        if key not in known:
            match = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
            hint = f"; did you mean '{match[0]}'?" if match else ""
            raise ValueError(
                f"unknown operation '{key}' at [{index}] (known: {', '.join(known)}){hint}"
            )
    return value


EachSpec.model_rebuild()  # `do` holds operations, defined after it
