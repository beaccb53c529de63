"""Operations over other expressions: ``jmespath`` (a computed value) and ``each`` (other
operations run on every object item of an array)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from bridge_rules import model_bindings as mb
from bridge_rules.bindings.ops.base import (
    Compiled,
    CompileNested,
    Operation,
    OpError,
    deep_copy,
    field_path,
    sequence,
)
from bridge_rules.bindings.paths import SimplePath, expression_problem
from bridge_rules.steps import Fn


class Jmespath(Operation[mb.JmesSpec]):
    """For what the other operations cannot say; it has no inverse (BR406)."""

    model = mb.JmesOp
    loses = True

    @classmethod
    def compile(cls, spec: mb.JmesSpec, nested: CompileNested) -> Compiled:
        import jmespath
        from jmespath.exceptions import JMESPathError

        problem = expression_problem(spec.expr, "JMESPath expression")
        if problem is not None:
            raise OpError("BR402", problem)
        try:
            expr = jmespath.compile(spec.expr)
        except (JMESPathError, ValueError, TypeError, RecursionError) as exc:  # plain errors too
            reason = " ".join(str(exc).split())[:200]
            raise OpError("BR402", f"invalid JMESPath '{spec.expr}': {reason}") from None
        into = field_path(spec.into, "jmespath target") if spec.into is not None else None

        def run(work: dict[str, Any]) -> None:
            try:
                result = expr.search(work)
            except Exception:  # a type error at runtime leaves the arguments as they were
                return
            if into is not None:
                if result is not None:
                    into.set(work, deep_copy(result))
            elif isinstance(result, dict):
                new = deep_copy(result)
                work.clear()
                work.update(new)

        return Compiled(
            forward=run,
            inverse=None,
            why_not="a JMESPath expression has no derivable inverse",
            exact=False,
            text=f"jmespath {spec.expr!r} -> {spec.into or 'the arguments'}",
        )


def _applied(item: dict[str, Any], fn: Fn) -> dict[str, Any]:
    copied = dict(item)
    fn(copied)
    return copied


def _on_items(path: SimplePath, fn: Fn) -> Fn:
    def run(work: dict[str, Any]) -> None:
        items = path.get(work)
        if isinstance(items, list) and any(isinstance(i, dict) for i in items):
            path.set(work, [_applied(i, fn) if isinstance(i, dict) else i for i in items])

    return run


class Each(Operation[mb.EachSpec]):
    """Paths inside ``do`` are relative to the item; ``each`` nests, ``each`` included."""

    model = mb.EachOp

    @classmethod
    def nested(cls, spec: mb.EachSpec) -> Sequence[BaseModel]:
        return spec.do

    @classmethod
    def compile(cls, spec: mb.EachSpec, nested: CompileNested) -> Compiled:
        path = field_path(spec.in_, "each field")
        inner = [nested(op) for op in spec.do]
        lossy = next((c for c in inner if c.inverse is None), None)
        inverse = None
        if lossy is None:
            inverse = _on_items(path, sequence([c.inverse for c in reversed(inner) if c.inverse]))
        return Compiled(
            forward=_on_items(path, sequence([c.forward for c in inner])),
            inverse=inverse,
            why_not=f"'{lossy.text}' cannot be inverted ({lossy.why_not})" if lossy else None,
            exact=all(c.exact for c in inner),
            text=f"each {spec.in_}[*]: " + "; ".join(c.text for c in inner),
            reads=(spec.in_,),
            writes=(spec.in_,),
        )
