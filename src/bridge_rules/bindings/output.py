"""A binding's ``output:`` operations compiled once: one function over a tool result.

The result is reshaped on its way to the model (history replay), from what the agent
holds, in every request: the agent's own copy never changes, so nothing is applied twice.
Only text changes: a string ``content``, or the ``text`` of each text block of a list
(images and other blocks stay). What an operation reads of the call (``start_from``)
comes with the call's id (``transform.results``), never from a worker's memory.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from bridge_rules import model_output as mo
from bridge_rules.source import Span

TextFn = Callable[[str, Mapping[str, Any]], str]
"""(text, the call's arguments the operation reads) -> text."""


def _number_lines(spec: mo.NumberLines) -> TextFn:
    def run(text: str, args: Mapping[str, Any]) -> str:
        first = spec.start
        if spec.start_from is not None:
            given = args.get(spec.start_from)
            if type(given) is int and given >= 1:
                first = given
        lines = text.split("\n")
        last = lines.pop()  # after the last newline: a line only when it holds something
        if last:
            lines.append(last)
        out = [f"{n:>{spec.width}}{spec.separator}{line}" for n, line in enumerate(lines, first)]
        return "\n".join(out) + ("\n" if not last and out else "")

    return run


def _surround(spec: mo.Surround) -> TextFn:
    return lambda text, _args: f"{spec.before}{text}{spec.after}"


def _replace(spec: mo.Replace) -> TextFn:
    pairs = tuple(spec.text.items())

    def run(text: str, _args: Mapping[str, Any]) -> str:
        for old, new in pairs:
            text = text.replace(old, new)
        return text

    return run


_COMPILERS: dict[type[BaseModel], Callable[[Any], TextFn]] = {
    mo.NumberLinesOp: _number_lines,
    mo.SurroundOp: _surround,
    mo.ReplaceOp: _replace,
}
if set(_COMPILERS) != set(mo.OUTPUT_MODELS.values()):  # pragma: no cover - programming error
    raise RuntimeError("every output operation model needs its compiler in bindings/output.py")


def _text(op: BaseModel) -> str:
    spec = mo.output_spec(op)
    fields = spec.model_dump(exclude_defaults=True)
    inner = ", ".join(f"{k}: {v!r}" for k, v in fields.items())
    return f"{mo.output_kind(type(op))} {{{inner}}}"


@dataclass(frozen=True)
class OutputStep:
    text: str
    span: Span
    when: mo.When
    run: TextFn


@dataclass(frozen=True)
class OutputPlan:
    """A binding's output operations, in order, and the arguments of the call they read."""

    steps: tuple[OutputStep, ...]
    reads: tuple[str, ...]

    def reshape(self, content: Any, is_error: bool, args: Mapping[str, Any]) -> Any:
        """``content`` in the promised shape; as it is when it holds no text."""
        steps = [s for s in self.steps if s.when == "always" or (s.when == "error") is is_error]
        if not steps:
            return content
        if isinstance(content, str):
            return _run(steps, content, args)
        if not isinstance(content, list):
            return content
        out = [
            {**b, "text": _run(steps, b["text"], args)}
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
            else b
            for b in content
        ]
        return out if any(n is not o for n, o in zip(out, content, strict=True)) else content


def _run(steps: Sequence[OutputStep], text: str, args: Mapping[str, Any]) -> str:
    for step in steps:
        text = step.run(text, args)
    return text


def compile_output(ops: Sequence[BaseModel], span_of: Callable[[int], Span]) -> OutputPlan | None:
    """The plan of a binding's ``output:`` (None when it has none)."""
    if not ops:
        return None
    steps = []
    reads: list[str] = []
    for index, op in enumerate(ops):
        spec = mo.output_spec(op)
        steps.append(OutputStep(_text(op), span_of(index), spec.when, _COMPILERS[type(op)](spec)))
        start_from = getattr(spec, "start_from", None)
        if start_from is not None and start_from not in reads:
            reads.append(start_from)
    return OutputPlan(tuple(steps), tuple(reads))
