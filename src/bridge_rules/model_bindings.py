"""The rule format of argument bindings and argument repair (strict pydantic, no I/O).

An operation is written as a one-key mapping (``- rename: {file_path: path}``);
the key selects the model, so a typo names the operation it missed. Paths are
dotted field names (``a.b``); a path starting with ``$`` is JSONPath and is
only used where a dotted path cannot say it.
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
    model_validator,
)

from bridge_rules.model_output import OUTPUT_MODELS, OutputOperation


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


# ------------------------------------------------------------------ losses
class Loss(_Strict):
    """Where history replay cannot give back what was sent, said in the rule file.

    The round-trip law (``tests/bindings/test_roundtrip*.py``) reads these: wire -> local ->
    wire and local -> wire -> local must give back the original, except in the fields a
    declaration names, when its condition holds. ``explain`` prints them.
    """

    fields: list[str] = Field(
        min_length=1,
        description="The fields that may not come back as sent (wire or local names); `*`: "
        "the whole call.",
    )
    side: Literal["wire", "local", "both"] = Field(
        "both",
        description="Which round trip loses: `wire` (a model's call replayed), `local` (an "
        "agent's call sent and read back), or `both`.",
    )
    when: list[str] = Field(
        default_factory=list,
        description="Only when every one of these fields is present in the original call.",
    )
    kind: Literal["value", "order"] = Field(
        "value",
        description="`order`: the items come back, possibly in another order; `value`: the "
        "fields may change or disappear.",
    )
    why: str = Field(min_length=1, description="What is lost and why it cannot be kept.")

    def describe(self) -> str:
        what = "*" if "*" in self.fields else ", ".join(self.fields)
        cond = f" when {' and '.join(self.when)} given" if self.when else ""
        kind = "order of " if self.kind == "order" else ""
        return f"{kind}{what} ({self.side}{cond}): {self.why}"


EachSpec.model_rebuild()  # `do` holds operations, defined after it


# ---------------------------------------------------------------- binding
class Binding(_Strict):
    """A local tool bound to a wire tool. Arguments are translated by `input` operations."""

    local: str
    wire: str
    schema_: Literal["passthrough", "canonical", "hybrid"] = Field(
        "passthrough",
        alias="schema",
        description="What the model sees: the local schema under the wire name (`passthrough`), "
        "the pinned wire schema (`canonical`), or the pinned wire fields plus `extras` (`hybrid`).",
    )
    extras: list[str] = Field(
        default_factory=list, description="Local fields a hybrid schema adds to the wire fields."
    )
    required: list[str] | None = Field(
        None, description="Overrides the wire schema's `required` list (hybrid alternatives)."
    )
    input: list[Operation] = Field(
        default_factory=list, description="Wire -> local operations, applied in order."
    )
    history: list[Operation] | Literal["auto", "none"] = Field(
        "auto",
        description="Local -> wire for history replay: `auto` derives the inverse of `input`, a "
        "list declares it, `none` replays local arguments unchanged.",
    )
    losses: list[Loss] = Field(
        default_factory=list,
        description="What history replay cannot give back as sent, and why (the round-trip "
        "law's exceptions; `explain` shows them).",
    )
    description: str | None = None
    wire_description: str = Field(
        "auto",
        description="The tool description sent with the wire name: `local` (the agent's), "
        "`pin` (the pinned wire tool's own), `auto` (`pin` when the schema is the wire's and "
        "the pin has a description, else the agent's with renamed field names rewritten), or "
        "any other text, sent as it is.",
    )
    output: list[OutputOperation] = Field(
        default_factory=list,
        description="Operations on the agent's tool result, in order, so it takes the shape "
        "the sent description promises; applied only when that description is not the "
        "agent's own.",
    )

    @field_validator("input", "history", mode="before")
    @classmethod
    def _shapes(cls, value: Any) -> Any:
        return _check_op_shapes(value)

    @field_validator("output", mode="before")
    @classmethod
    def _output_shapes(cls, value: Any) -> Any:
        return _check_op_shapes(value, OUTPUT_MODELS)


# ----------------------------------------------------------------- repair
class StripPipeline(_Strict):
    """Strip trailing extractor commands (``| head -5``) from a shell command (pi-tool-guard)."""

    field: str = "command"
    extractors: list[str] = Field(min_length=1)
    record: dict[Literal["original", "removed", "pipeline"], str] = Field(
        default_factory=dict,
        description="Keys that receive the original command, `true`, and the removed pipeline.",
    )


class EditShorthand(_Strict):
    """``{oldText, newText}`` at the top level -> ``edits: [{oldText, newText}]``."""

    into: str = "edits"
    fields: list[str] = Field(default_factory=lambda: ["oldText", "newText"], min_length=1)


class Repair(_Strict):
    """Argument repair for local tools, applied after bindings, in this field order."""

    tool: str | list[str]
    aliases: dict[str, list[str]] = Field(
        default_factory=dict, description="Canonical key -> aliases (exact, case-sensitive)."
    )
    shorthand: EditShorthand | None = None
    json_arrays: list[str] = Field(
        default_factory=list, description="String fields parsed as JSON, used only if an array."
    )
    aliases_in: list[str] = Field(
        default_factory=list, description="Array fields whose object items get the same aliases."
    )
    numbers: list[str] = Field(
        default_factory=list, description="String fields coerced with JavaScript parseFloat."
    )
    strip_pipeline: StripPipeline | None = None
    description: str | None = None

    def tools(self) -> list[str]:
        return [self.tool] if isinstance(self.tool, str) else list(self.tool)

    @model_validator(mode="after")
    def _aliases_unique(self) -> Repair:
        seen: dict[str, str] = {}
        for canonical, names in self.aliases.items():
            for name in names:
                if name in seen and seen[name] != canonical:
                    raise ValueError(
                        f"alias '{name}' is listed for both '{seen[name]}' and '{canonical}'"
                    )
                seen[name] = canonical
        return self
