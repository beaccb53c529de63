"""The rule format of a binding's ``output:`` operations (strict pydantic, no I/O).

Argument operations (``input:``) reshape a call; output operations reshape what the
agent's tool gave back (the ``tool_result`` content) on its way to the model, so that
the result takes the shape the description sent with the tool promises (Claude Code's
Read says its lines come numbered as ``cat -n`` numbers them). Each is a one-key
mapping, as argument operations are; the key selects the model.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag

When = Literal["always", "ok", "error"]
_WHEN_DOC = "Which results: `ok`, `error` (the agent marked it `is_error`), or `always`."


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, populate_by_name=True)


class NumberLines(_Strict):
    start: int = Field(1, ge=0, description="The number of the first line.")
    start_from: str | None = Field(
        None,
        description="A local argument of the call whose integer value (1 or more) numbers the "
        "first line instead (pi's `offset`), so a read from line 40 starts at 40.",
    )
    width: int = Field(6, ge=1, le=20, description="Numbers are right-aligned to this width.")
    separator: str = Field("\t", description="Between the number and the line.")
    when: When = Field("always", description=_WHEN_DOC)


class Surround(_Strict):
    before: str = ""
    after: str = ""
    when: When = Field("always", description=_WHEN_DOC)


class Replace(_Strict):
    text: dict[str, str] = Field(
        min_length=1, description="Literal text -> its replacement, applied in order."
    )
    when: When = Field("always", description=_WHEN_DOC)


class OutputOpModel(_Strict):
    """One output operation: a mapping whose one key names it. Every subclass joins the
    :data:`OutputOperation` union, in declaration order; its behaviour is in
    ``bindings/output.py``, which checks at import that it covers every model."""


class NumberLinesOp(OutputOpModel):
    """Number every line of the text, as ``cat -n`` does (a line is what ends in a newline)."""

    number_lines: NumberLines


class SurroundOp(OutputOpModel):
    """Put text before and after the whole text (``<tool_use_error>`` ... on errors)."""

    surround: Surround


class ReplaceOp(OutputOpModel):
    """Replace literal text (an agent's error marker with the one the description names)."""

    replace: Replace


def output_kind(model: type[BaseModel]) -> str:
    return next(iter(model.model_fields))


def output_spec(op: BaseModel) -> Any:
    return getattr(op, output_kind(type(op)))


def _tag(value: Any) -> str | None:
    if isinstance(value, dict):
        return next(iter(value), None) if len(value) == 1 else None
    if isinstance(value, BaseModel):
        return output_kind(type(value))
    return None


def _union(models: Iterable[type[OutputOpModel]]) -> Any:
    members = tuple(Annotated[m, Tag(output_kind(m))] for m in models)
    return Annotated[Union[members], Discriminator(_tag)]  # noqa: UP007 (built at runtime)


OUTPUT_MODELS: dict[str, type[OutputOpModel]] = {
    output_kind(m): m for m in OutputOpModel.__subclasses__()
}

if TYPE_CHECKING:
    OutputOperation = OutputOpModel
else:
    OutputOperation = _union(OUTPUT_MODELS.values())
