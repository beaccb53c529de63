"""The contract every argument operation is written against, and the helpers they share.

An operation is one class: the rule-format model it reads (declared in
:mod:`bridge_rules.model_ops`), whether replay can lose what it changed, and
``compile``, which turns one written operation into a :class:`Compiled`: a forward
function (wire -> local), its inverse for history replay (or why there is none), the text
``explain`` prints and the fields lint checks against the pins. The registry
(:mod:`.registry`) lists the classes; nothing else names an operation.

A compiled function receives a dict the adapter owns (a shallow copy); nested values
are copied before they are changed, so the caller's arguments are never mutated. No
function raises on any JSON shape: what does not fit is left as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel

from bridge_rules import model_bindings as mb
from bridge_rules.bindings.paths import JsonPath, PathError, SimplePath, compile_path
from bridge_rules.steps import Fn


@dataclass(frozen=True, kw_only=True)
class Compiled:
    """One operation, compiled once at load: everything the runtime, explain and lint use."""

    forward: Fn
    inverse: Fn | None
    """Local -> wire for history replay; None when it cannot be derived (``why_not``)."""
    why_not: str | None = None
    inverse_needs: frozenset[str] | None = None
    """Top-level keys without any of which ``inverse`` leaves the arguments as they are (None:
    not declared): history replay hands such a call's arguments back without copying them."""
    exact: bool
    """Whether the round trip gives back the same JSON (nothing reordered, defaulted, rounded)."""
    text: str
    """How ``explain`` and diagnostics name this operation (``rename a -> b``)."""
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    """The field paths read and written, checked against the pinned schemas (BR404/BR405)."""
    spellings: tuple[tuple[str, str], ...] = ()
    """(local, wire): how the agent's own tool description names a field the model sees under
    another name (``edits[].oldText`` is ``old_string``), for the description sent with a
    swapped schema (``bindings.describe``)."""


class OpError(ValueError):
    """A rule the compiler rejects; ``code`` is its diagnostic code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


CompileNested = Callable[[BaseModel], Compiled]
"""Compiles an operation written inside another one (``each``'s ``do``)."""

SpecT = TypeVar("SpecT")


class Operation(Generic[SpecT]):
    """One argument operation, declared once; subclasses are listed in the registry.

    ``SpecT`` is the type of the value written under the operation's key.
    """

    model: ClassVar[type[mb.OpModel]]
    """The rule-format model; its one field's key is the operation's name."""

    loses: ClassVar[bool] = False
    """Whether replay may not give back what was sent (a field removed, added or chosen, or
    list items reordered): lint asks such a binding to declare its ``losses:`` (BR408)."""

    @classmethod
    def kind(cls) -> str:
        return mb.kind_of(cls.model)

    @classmethod
    def nested(cls, spec: SpecT) -> Sequence[BaseModel]:
        """Operations written inside this one; a binding loses if one of them does."""
        return ()

    @classmethod
    def compile(cls, spec: SpecT, nested: CompileNested) -> Compiled:
        """Compile ``spec``; a bad path or expression raises :class:`OpError`."""
        raise NotImplementedError


def identity(_work: dict[str, Any]) -> None:
    return None


def sequence(fns: list[Fn]) -> Fn:
    def run(work: dict[str, Any]) -> None:
        for fn in fns:
            fn(work)

    return run


def deep_copy(value: Any) -> Any:
    """A JSON deep copy (much cheaper than ``copy.deepcopy``)."""
    if isinstance(value, dict):
        return {k: deep_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [deep_copy(v) for v in value]
    return value


def any_path(text: str) -> SimplePath | JsonPath:
    try:
        return compile_path(text)
    except PathError as exc:
        raise OpError("BR401", str(exc)) from None


def field_path(text: str, role: str) -> SimplePath:
    path = any_path(text)
    if not isinstance(path, SimplePath):
        raise OpError("BR401", f"{role} '{text}' must be a field path, not JSONPath")
    return path


def copied_tops(work: dict[str, Any]) -> None:
    """Copy every top-level value, before a JSONPath changes what it matched in place."""
    for key in list(work):
        work[key] = deep_copy(work[key])
