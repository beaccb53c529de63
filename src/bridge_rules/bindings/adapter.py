"""A binding compiled once: wire -> local steps, local -> wire steps, and their provenance."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

from pydantic import BaseModel

from bridge_rules.bindings.describe import Rename, field_renamer
from bridge_rules.bindings.ops import Compiled, OpError, compile_op
from bridge_rules.bindings.ops.base import identity
from bridge_rules.bindings.ops.fields import Rekey
from bridge_rules.bindings.output import OutputPlan, compile_output
from bridge_rules.diagnostics import Diagnostic, error
from bridge_rules.model_bindings import Binding, op_kind
from bridge_rules.source import Span
from bridge_rules.steps import SpanOf, Step, run_steps

HistoryMode = Literal["auto", "declared", "none"]


@dataclass(frozen=True)
class Lossy:
    """An input operation whose inverse cannot be derived, and why."""

    step: Step
    why: str


@dataclass(frozen=True)
class Adapter:
    """Everything the runtime needs for one binding; built by :func:`compile_binding`."""

    binding: Binding
    span: Span
    steps: tuple[Step, ...]
    history: tuple[Step, ...]
    history_mode: HistoryMode
    lossy: tuple[Lossy, ...]
    loss_spans: tuple[Span, ...] = ()
    """Where each of ``binding.losses`` is declared, in the same order."""
    rename_fields: Rename | None = None
    """Writes the agent's field names in a description as the wire schema has them."""
    output: OutputPlan | None = None
    """The ``output:`` operations, compiled (None: none)."""

    @property
    def local(self) -> str:
        return self.binding.local

    @property
    def wire(self) -> str:
        return self.binding.wire

    @property
    def invertible(self) -> bool:
        """Whether local -> wire -> local gives the local arguments back (auto history only)."""
        return self.history_mode == "auto" and not self.lossy

    @property
    def exact(self) -> bool:
        """Invertible with nothing reordered, rounded or defaulted on the way."""
        return self.invertible and all(s.exact for s in self.steps)

    def to_local(self, arguments: Any) -> Any:
        return run_steps(self.steps, arguments)

    def to_wire(self, arguments: Any) -> Any:
        return run_steps(self.history, arguments)


def history_converter(adapter: Adapter | None) -> Callable[[Any], Any] | None:
    """:meth:`Adapter.to_wire` as history replay runs it, once per ``tool_use`` of a request
    (issue 36), or None when nothing replays.

    Equal arguments out, built with less: steps that do nothing (``identity``, the inverse
    of ``drop``) are left out; a call that holds none of the keys the steps need (each
    step's ``needs``) is handed back as it is, not copied; and a replay that is one
    top-level rename builds the renamed dict in one comprehension. Replay's output is read,
    never changed in place, so handing the arguments back is safe. Anything else is a
    ``partial`` of :func:`run_steps`, which has no Python frame of its own."""
    if adapter is None:
        return None
    steps = tuple(s for s in adapter.history if s.run is not identity)
    if not steps:
        return None
    only = steps[0].run
    if len(steps) == 1 and isinstance(only, Rekey):
        return partial(_renamed, only)
    needs: set[str] = set()
    for step in steps:
        if step.needs is None:
            return partial(run_steps, steps)
        needs |= step.needs
    return partial(_guarded, frozenset(needs), steps)


def _renamed(rekey: Rekey, arguments: Any) -> Any:
    if type(arguments) is dict:
        return rekey.renamed(arguments)
    if isinstance(arguments, dict):  # a subclass comes out a plain dict, as run_steps makes it
        work = dict(arguments)
        rekey(work)
        return work
    return arguments


def _guarded(needs: frozenset[str], steps: tuple[Step, ...], arguments: Any) -> Any:
    if type(arguments) is dict and needs.isdisjoint(arguments):
        return arguments
    return run_steps(steps, arguments)


def _steps(
    ops: Iterable[BaseModel], section: str, span_of: SpanOf, diags: list[Diagnostic]
) -> list[tuple[Step, Compiled]]:
    out = []
    for index, op in enumerate(ops):
        span = span_of((section, index))
        try:
            compiled = compile_op(op)
        except OpError as exc:
            diags.append(error(exc.code, str(exc), span))
            continue
        step = Step(
            kind=op_kind(op),
            text=compiled.text,
            span=span,
            run=compiled.forward,
            exact=compiled.exact,
            reads=compiled.reads,
            writes=compiled.writes,
        )
        out.append((step, compiled))
    return out


def compile_binding(
    binding: Binding, span: Span, span_of: SpanOf
) -> tuple[Adapter, list[Diagnostic]]:
    """Compile one binding; bad paths and expressions become diagnostics, never exceptions.

    ``span_of(("input", 2))`` locates an operation inside the binding.
    """
    diags: list[Diagnostic] = []
    forward = _steps(binding.input, "input", span_of, diags)
    lossy: list[Lossy] = []
    history: list[Step] = []
    mode: HistoryMode
    if binding.history == "none":
        mode = "none"
    elif binding.history == "auto":
        mode = "auto"
        for step, compiled in reversed(forward):
            if compiled.inverse is None:
                lossy.append(Lossy(step, compiled.why_not or "not invertible"))
                continue
            history.append(
                Step(
                    kind=f"inverse {step.kind}",
                    text=step.text,
                    span=step.span,
                    run=compiled.inverse,
                    exact=step.exact,
                    needs=compiled.inverse_needs,
                )
            )
    else:
        mode = "declared"
        history = [s for s, _ in _steps(binding.history, "history", span_of, diags)]
    adapter = Adapter(
        binding=binding,
        span=span,
        steps=tuple(s for s, _ in forward),
        history=tuple(history),
        history_mode=mode,
        lossy=tuple(reversed(lossy)),
        loss_spans=tuple(span_of(("losses", i)) for i in range(len(binding.losses))),
        rename_fields=field_renamer(pair for _, c in forward for pair in c.spellings),
        output=compile_output(binding.output, lambda i: span_of(("output", i))),
    )
    return adapter, diags
