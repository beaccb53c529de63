"""The rule format of argument bindings and argument repair (strict pydantic, no I/O).

An operation is written as a one-key mapping (``- rename: {file_path: path}``);
the key selects the model, so a typo names the operation it missed. Paths are
dotted field names (``a.b``); a path starting with ``$`` is JSONPath and is
only used where a dotted path cannot say it.

The operations themselves are declared in :mod:`bridge_rules.model_ops` and re-exported
here, so ``model_bindings`` stays the one name the rest of the code reads the format by.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    Field,
    field_validator,
    model_validator,
)

from bridge_rules.model_ops import (
    OP_MODELS,
    CoalesceOp,
    CoalesceSpec,
    CoerceOp,
    Coercion,
    CopyOp,
    DefaultOp,
    DropOp,
    EachOp,
    EachSpec,
    JmesOp,
    JmesSpec,
    KeepOp,
    MergeOp,
    MergeSpec,
    Operation,
    OpModel,
    PreferOp,
    RenameOp,
    ScaleOp,
    Source,
    SourceRef,
    SplitOp,
    SplitSpec,
    UnwrapOp,
    UnwrapSpec,
    ValuesOp,
    WrapOp,
    WrapSpec,
    _check_op_shapes,
    _Strict,
    kind_of,
    op_kind,
    op_spec,
    operation_union,
    source_of,
)
from bridge_rules.model_output import OUTPUT_MODELS, OutputOperation

__all__ = [
    "OP_MODELS",
    "CoalesceOp",
    "CoalesceSpec",
    "CoerceOp",
    "Coercion",
    "CopyOp",
    "DefaultOp",
    "DropOp",
    "EachOp",
    "EachSpec",
    "JmesOp",
    "JmesSpec",
    "KeepOp",
    "MergeOp",
    "MergeSpec",
    "OpModel",
    "Operation",
    "PreferOp",
    "RenameOp",
    "ScaleOp",
    "Source",
    "SourceRef",
    "SplitOp",
    "SplitSpec",
    "UnwrapOp",
    "UnwrapSpec",
    "ValuesOp",
    "WrapOp",
    "WrapSpec",
    "kind_of",
    "op_kind",
    "op_spec",
    "operation_union",
    "source_of",
]


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
