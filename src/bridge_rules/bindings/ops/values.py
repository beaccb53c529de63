"""Operations that change a field's value in place: ``coerce``, ``scale`` and ``values``.

Numbers are read exactly (a float through its shortest repr). ``scale`` writes the product
exactly when a JSON number holds it, else the double nearest to it: a unit conversion left
undone (a timeout 1000 times too long) is a far larger error than the 17th digit. Only a
product no double can hold (past its range) leaves the value as the client sent it.
"""

from __future__ import annotations

import json
import math
import re
from fractions import Fraction
from typing import Any

from bridge_rules import model_bindings as mb
from bridge_rules.bindings.ops.base import (
    Compiled,
    CompileNested,
    Operation,
    field_path,
    identity,
    sequence,
)
from bridge_rules.bindings.paths import MISSING, SimplePath
from bridge_rules.steps import Fn

_NUMBER = re.compile(r"-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?")
_INTEGER = re.compile(r"-?(0|[1-9]\d*)")


def _number(value: float) -> int | float:
    """Integral results as int, so ``3`` does not come back as ``3.0``."""
    if math.isfinite(value) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def coerce_value(value: Any, kind: mb.Coercion) -> Any:
    if kind == "string":
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            try:
                return json.dumps(value)
            except ValueError:  # an int past Python's digit limit: left as it is
                return value
        return value
    if not isinstance(value, str):
        return value
    text = value.strip()
    if kind == "number" and _NUMBER.fullmatch(text):
        result = float(text)
        return _number(result) if math.isfinite(result) else value
    if kind == "integer" and _INTEGER.fullmatch(text):
        try:
            return int(text)
        except ValueError:  # past Python's digit limit (4,300): left as the client sent it
            return value
    if kind == "boolean" and text.lower() in ("true", "false"):
        return text.lower() == "true"
    if kind == "array" and text.startswith("["):
        try:
            parsed = json.loads(text)
        except ValueError:
            return value
        return parsed if isinstance(parsed, list) else value
    return value


class Coerce(Operation[dict[str, mb.Coercion]]):
    model = mb.CoerceOp

    @classmethod
    def compile(cls, spec: dict[str, mb.Coercion], nested: CompileNested) -> Compiled:
        pairs = [(field_path(k, "coerce field"), kind) for k, kind in spec.items()]

        def run(work: dict[str, Any]) -> None:
            for path, kind in pairs:
                value = path.get(work)
                if value is not MISSING:
                    new = coerce_value(value, kind)
                    if new is not value:
                        path.set(work, new)

        return Compiled(
            forward=run,
            inverse=identity,
            exact=True,
            text="coerce " + ", ".join(f"{k} to {kind}" for k, kind in spec.items()),
            reads=tuple(spec),
            writes=tuple(spec),
        )


_INT_LIMIT = 2**63
"""Integers beyond this are not written as ints (orjson and most JSON readers stop at 64 bits)."""


def exact_number(value: Any) -> Fraction | None:
    """The number a JSON value denotes, exactly: a float is read through its shortest repr
    (``1.001`` is 1001/1000, not the binary fraction nearest to it). None: not a finite number."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float) and math.isfinite(value):
        return Fraction(repr(value))
    return None


def json_number(result: Fraction) -> int | float | None:
    """``result`` as a JSON number that reads back exactly: an int when integral, else the
    float whose shortest repr is exactly ``result``; None when there is no such number."""
    if result.denominator == 1 and abs(result.numerator) < _INT_LIMIT:
        return result.numerator
    try:
        as_float = result.numerator / result.denominator
    except OverflowError:  # beyond any float: no JSON number says it exactly
        return None
    if math.isfinite(as_float) and Fraction(repr(as_float)) == result:
        return as_float
    return None


def nearest_number(result: Fraction) -> int | float | None:
    """``result`` exactly when a JSON number holds it (:func:`json_number`), else the double
    nearest to it (int / int division rounds correctly); None when that would overflow, or
    round a non-zero product to zero."""
    exact = json_number(result)
    if exact is not None:
        return exact
    try:
        near = result.numerator / result.denominator
    except OverflowError:
        return None
    if not math.isfinite(near) or near == 0:
        return None
    return near


def _scaler(path: SimplePath, factor: Fraction) -> Fn:
    def run(work: dict[str, Any]) -> None:
        value = path.get(work)
        exact = exact_number(value)
        if exact is None:
            return
        result = nearest_number(exact * factor)
        if result is not None:  # past a double's range: left as the client sent it
            path.set(work, result)

    return run


class Scale(Operation[dict[str, float]]):
    model = mb.ScaleOp

    @classmethod
    def compile(cls, spec: dict[str, float], nested: CompileNested) -> Compiled:
        fwd: list[Fn] = []
        inv: list[Fn] = []
        tops: set[str] = set()
        for key, factor in spec.items():
            path = field_path(key, "scale field")
            frac = Fraction(str(factor))
            fwd.append(_scaler(path, frac))
            inv.append(_scaler(path, 1 / frac))
            tops.add(path.top)
        return Compiled(
            forward=sequence(fwd),
            inverse=sequence(inv),
            inverse_needs=frozenset(tops),
            exact=True,
            text="scale " + ", ".join(f"{k} by {f:g}" for k, f in spec.items()),
            reads=tuple(spec),
            writes=tuple(spec),
        )


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def _value_mapper(path: SimplePath, table: list[tuple[Any, Any]]) -> Fn:
    def run(work: dict[str, Any]) -> None:
        current = path.get(work)
        if current is MISSING or isinstance(current, (dict, list)):
            return
        for old, new in table:
            if _same(current, old):
                path.set(work, new)
                return

    return run


class Values(Operation[dict[str, dict[str, Any]]]):
    """Not exact: a local value that is also a table key goes back unchanged, then forward
    mapped."""

    model = mb.ValuesOp
    loses = True

    @classmethod
    def compile(cls, spec: dict[str, dict[str, Any]], nested: CompileNested) -> Compiled:
        fwd: list[Fn] = []
        inv: list[Fn] = []
        why = None
        for key, table in spec.items():
            path = field_path(key, "values field")
            pairs = list(table.items())
            fwd.append(_value_mapper(path, pairs))
            targets = [new for _, new in pairs]
            if any(_same(a, b) for i, a in enumerate(targets) for b in targets[i + 1 :]):
                why = f"two values of '{key}' map to one, so the way back cannot choose"
            inv.append(_value_mapper(path, [(new, old) for old, new in pairs]))
        text = "values " + "; ".join(
            f"{k}: " + ", ".join(f"{json.dumps(a)} -> {json.dumps(b)}" for a, b in t.items())
            for k, t in spec.items()
        )
        return Compiled(
            forward=sequence(fwd),
            inverse=None if why else sequence(inv),
            why_not=why,
            exact=False,
            text=text,
            reads=tuple(spec),
            writes=tuple(spec),
        )
