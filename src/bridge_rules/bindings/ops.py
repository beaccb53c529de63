"""Operations compiled into closures over a working copy of the arguments.

Each operation compiles to a forward function (wire -> local) and, where one
exists, the inverse (local -> wire, for history replay). A function receives a
dict the adapter owns (a shallow copy); nested values are copied before they
are changed, so the caller's arguments are never mutated. No function raises
on any JSON shape: what does not fit is left as it is.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from pydantic import BaseModel

from bridge_rules import model_bindings as mb
from bridge_rules.bindings.paths import (
    MISSING,
    JsonPath,
    PathError,
    SimplePath,
    compile_path,
    expression_problem,
)
from bridge_rules.steps import Fn


@dataclass(frozen=True)
class Compiled:
    """One operation: its forward function, its inverse (or why there is none)."""

    forward: Fn
    inverse: Fn | None
    why_not: str | None
    exact: bool
    text: str
    reads: tuple[str, ...]
    writes: tuple[str, ...]


class OpError(ValueError):
    """A rule the compiler rejects; ``code`` is its diagnostic code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def _identity(_work: dict[str, Any]) -> None:
    return None


def deep_copy(value: Any) -> Any:
    """A JSON deep copy (much cheaper than ``copy.deepcopy``)."""
    if isinstance(value, dict):
        return {k: deep_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [deep_copy(v) for v in value]
    return value


def _path(text: str) -> SimplePath | JsonPath:
    try:
        return compile_path(text)
    except PathError as exc:
        raise OpError("BR401", str(exc)) from None


def _simple(text: str, role: str) -> SimplePath:
    path = _path(text)
    if not isinstance(path, SimplePath):
        raise OpError("BR401", f"{role} '{text}' must be a field path, not JSONPath")
    return path


# ------------------------------------------------------------------ rename
def _rekey(mapping: dict[str, str]) -> Fn:
    keys = frozenset(mapping)

    def run(work: dict[str, Any]) -> None:
        if keys.isdisjoint(work):  # C-level scan; this runs once per replayed call
            return
        items = list(work.items())
        work.clear()
        for key, value in items:
            work[mapping.get(key, key)] = value

    return run


def _move(src: SimplePath | JsonPath, dst: str) -> Fn:
    if isinstance(src, JsonPath):
        rekey = _rekey({src.last: dst})

        def run_json(work: dict[str, Any]) -> None:
            for key in list(work):
                work[key] = deep_copy(work[key])
            for match in src.parents(work):
                if isinstance(match.value, dict):
                    rekey(match.value)

        return run_json
    target = _simple(dst, "rename target")

    def run(work: dict[str, Any]) -> None:
        value = src.pop(work)
        if value is not MISSING:
            target.set(work, value)

    return run


def _sequence(fns: list[Fn]) -> Fn:
    def run(work: dict[str, Any]) -> None:
        for fn in fns:
            fn(work)

    return run


def _rename(mapping: dict[str, str]) -> Compiled:
    text = "rename " + ", ".join(f"{a} -> {b}" for a, b in mapping.items())
    reads, writes = tuple(mapping), tuple(mapping.values())
    paths = {src: _path(src) for src in mapping}
    flat = all(isinstance(p, SimplePath) and len(p.keys) == 1 for p in paths.values()) and all(
        "." not in dst and not dst.startswith("$") for dst in mapping.values()
    )
    why = None
    if len(set(mapping.values())) != len(mapping):
        why = "two fields are renamed to the same field"
    if flat:
        inverse = None if why else _rekey({b: a for a, b in mapping.items()})
        return Compiled(_rekey(mapping), inverse, why, True, text, reads, writes)
    forward = _sequence([_move(paths[src], dst) for src, dst in mapping.items()])
    back: list[Fn] = []
    for src, dst in reversed(mapping.items()):
        path = paths[src]
        if isinstance(path, JsonPath):
            inv_src = _path(path.text[: -len(path.last)] + dst)
            back.append(_move(inv_src, path.last))
        else:
            back.append(_move(_simple(dst, "rename target"), src))
    return Compiled(forward, None if why else _sequence(back), why, True, text, reads, writes)


# ------------------------------------------------------------- wrap/unwrap
def _rename_unpaired(work: dict[str, Any], names: dict[str, str]) -> None:
    """Fields a wrap or unwrap could not pair still change dialect: each present field is
    renamed to its name on the other side, unless that name is taken (then both stay)."""
    for old, new in names.items():
        if old in work and new not in work:
            work[new] = work.pop(old)


def _wrap_fn(into: str, fields: dict[str, str]) -> Fn:
    needed = frozenset(fields)

    def run(work: dict[str, Any]) -> None:
        if needed.isdisjoint(work):
            return
        existing = work.get(into, MISSING)
        nowhere = existing is not MISSING and not isinstance(existing, list)
        if nowhere or not work.keys() >= needed:  # a partial call, or nowhere to put it
            _rename_unpaired(work, fields)
            return
        item = {key: work.pop(f) for f, key in fields.items()}
        work[into] = [*existing, item] if existing is not MISSING else [item]

    return run


def _unwrap_fn(source: str, fields: dict[str, str]) -> Fn:
    keys = set(fields)
    taken = frozenset([*fields, *fields.values()])

    def run(work: dict[str, Any]) -> None:
        value = work.get(source)
        item = value[0] if isinstance(value, list) and len(value) == 1 else None
        # Unwrapped only when nothing at the top level would collide with the item's fields.
        if not isinstance(item, dict) or item.keys() != keys or not taken.isdisjoint(work):
            _rename_unpaired(work, fields)
            return
        del work[source]
        for key, field in fields.items():
            work[field] = item[key]

    return run


def _wrap(spec: mb.WrapSpec) -> Compiled:
    back = {v: k for k, v in spec.fields.items()}
    text = f"wrap {', '.join(spec.fields)} -> {spec.into}[] as {{{', '.join(back)}}}"
    return Compiled(
        _wrap_fn(spec.into, spec.fields),
        _unwrap_fn(spec.into, back),
        None,
        True,
        text,
        tuple(spec.fields),
        (spec.into,),
    )


def _unwrap(spec: mb.UnwrapSpec) -> Compiled:
    back = {v: k for k, v in spec.fields.items()}
    text = f"unwrap {spec.from_}[0] -> {', '.join(spec.fields.values())}"
    return Compiled(
        _unwrap_fn(spec.from_, spec.fields),
        _wrap_fn(spec.from_, back),
        None,
        True,
        text,
        (spec.from_,),
        tuple(spec.fields.values()),
    )


# ------------------------------------------------------------- merge/split
class _Sorter:
    """How a split assigns a merged item to a source: the longest matching prefix wins, an
    item without one goes to the source without a prefix (if any). A merge writes only items
    this reads back to the same source and value, so the encoding is unambiguous."""

    def __init__(self, sources: list[mb.Source]) -> None:
        self.prefixed = sorted((s for s in sources if s.prefix), key=lambda s: -len(s.prefix))
        self.plain = next((s for s in sources if not s.prefix), None)

    def sort(self, item: Any) -> tuple[mb.Source | None, Any]:
        if isinstance(item, str):
            for src in self.prefixed:
                if item.startswith(src.prefix):
                    return src, item[len(src.prefix) :]
        return self.plain, item


def _merged(sorter: _Sorter, src: mb.Source, value: Any) -> list[Any] | None:
    """One source's items with its prefix, or None when one would read back differently
    (an allowed domain starting with '-', a blocked item that is not a string)."""
    out = []
    for item in value if isinstance(value, list) else [value]:
        merged = src.prefix + item if isinstance(item, str) else item
        back, rest = sorter.sort(merged)
        if back is not src or rest != item or type(rest) is not type(item):
            return None
        out.append(merged)
    return out


def _merge_fn(into: str, sources: list[mb.Source]) -> Fn:
    sorter = _Sorter(sources)
    fields = [s.field for s in sources]

    def run(work: dict[str, Any]) -> None:
        present = [s for s in sources if s.field in work]
        if not present:
            return
        every = len(present) == len(sources) and into not in work
        if every and all(work[f] == [] for f in fields):  # every list given, all empty: one []
            for f in fields:
                del work[f]
            work[into] = []
            return
        items: list[Any] = []
        used = []
        for src in present:
            value = work[src.field]
            if value == []:
                continue  # an empty list stays as sent, so it replays as sent
            merged = _merged(sorter, src, value)
            if merged is None:
                return  # ambiguous: every source stays as sent
            items.extend(merged)
            used.append(src.field)
        if not used:
            return
        for f in used:
            del work[f]
        existing = work.get(into, MISSING)
        if isinstance(existing, list):
            items = [*existing, *items]
        elif existing is not MISSING:
            items = [existing, *items]
        work[into] = items

    return run


def _split_fn(source: str, targets: list[mb.Source]) -> Fn:
    sorter = _Sorter(targets)

    def run(work: dict[str, Any]) -> None:
        value = work.get(source, MISSING)
        if not isinstance(value, list):
            return
        if not value:  # the one encoding of "every list given, all empty"
            del work[source]
            for t in targets:
                work.setdefault(t.field, [])
            return
        out: dict[str, list[Any]] = {}
        rest: list[Any] = []
        for item in value:
            hit, bare = sorter.sort(item)
            if hit is None:
                rest.append(bare)
            else:
                out.setdefault(hit.field, []).append(bare)
        if rest:
            work[source] = rest
        else:
            del work[source]
        for field, items in out.items():
            existing = work.get(field)
            work[field] = [*existing, *items] if isinstance(existing, list) else items

    return run


def _describe_sources(sources: list[mb.Source]) -> str:
    return ", ".join(
        f"{s.field}" + (f" (prefix '{s.prefix}')" if s.prefix else "") for s in sources
    )


def _merge(spec: mb.MergeSpec) -> Compiled:
    sources = [mb.source_of(s) for s in spec.from_]
    why = None
    if sum(1 for s in sources if not s.prefix) > 1:
        why = "more than one source has no prefix, so a split cannot tell them apart"
    elif len({s.prefix for s in sources}) != len(sources):
        why = "two sources share a prefix"
    text = f"merge {_describe_sources(sources)} -> {spec.into}"
    inverse = None if why else _split_fn(spec.into, sources)
    return Compiled(
        _merge_fn(spec.into, sources),
        inverse,
        why,
        False,
        text,
        tuple(s.field for s in sources),
        (spec.into,),
    )


def _split(spec: mb.SplitSpec) -> Compiled:
    targets = [mb.source_of(s) for s in spec.into]
    text = f"split {spec.from_} -> {_describe_sources(targets)}"
    return Compiled(
        _split_fn(spec.from_, targets),
        _merge_fn(spec.from_, targets),
        None,
        False,
        text,
        (spec.from_,),
        tuple(t.field for t in targets),
    )


# ---------------------------------------------------- prefer/coalesce/keep
def _present(value: Any) -> bool:
    return value is not MISSING and value is not None and value not in ("", [], {})


def _prefer(mapping: dict[str, str]) -> Compiled:
    pairs = list(mapping.items())

    def run(work: dict[str, Any]) -> None:
        for winner, loser in pairs:
            if loser in work and _present(work.get(winner, MISSING)):
                del work[loser]

    text = "prefer " + ", ".join(f"{w} over {lo}" for w, lo in pairs)
    why = "the dropped field cannot be restored"
    return Compiled(run, None, why, False, text, (*mapping, *mapping.values()), tuple(mapping))


def _coalesce(spec: mb.CoalesceSpec) -> Compiled:
    into, sources = spec.into, spec.from_

    def run(work: dict[str, Any]) -> None:
        if not any(s in work for s in sources):
            return
        chosen = MISSING
        for src in sources:
            value = work.pop(src, MISSING)
            if chosen is MISSING and value is not MISSING and value is not None:
                chosen = value
        if chosen is not MISSING:
            work[into] = chosen

    text = f"coalesce {' ?? '.join(sources)} -> {into}"
    why = "the sources that lost cannot be restored"
    return Compiled(run, None, why, False, text, tuple(sources), (into,))


def _keep(fields: list[str]) -> Compiled:
    kept = frozenset(fields)

    def run(work: dict[str, Any]) -> None:
        for key in [k for k in work if k not in kept]:
            del work[key]

    why = "every other field is removed"
    return Compiled(run, None, why, False, "keep only " + ", ".join(fields), (), tuple(fields))


def _drop(spec: list[str] | dict[str, Any]) -> Compiled:
    if isinstance(spec, list):
        paths = [_path(p) for p in spec]

        def run(work: dict[str, Any]) -> None:
            for path in paths:
                if isinstance(path, SimplePath):
                    path.pop(work)
                    continue
                for key in list(work):
                    work[key] = deep_copy(work[key])
                for match in path.parents(work):
                    if isinstance(match.value, dict):
                        match.value.pop(path.last, None)

        return Compiled(run, _identity, None, True, "drop " + ", ".join(spec), tuple(spec), ())
    conditions = [(_simple(k, "drop field"), v) for k, v in spec.items()]

    def run_when(work: dict[str, Any]) -> None:
        for path, value in conditions:
            current = path.get(work)
            if current is not MISSING and type(current) is type(value) and current == value:
                path.pop(work)

    text = "drop " + ", ".join(f"{k} when {json.dumps(v)}" for k, v in spec.items())
    return Compiled(run_when, _identity, None, True, text, tuple(spec), ())


def _default(spec: dict[str, Any]) -> Compiled:
    pairs = [(_simple(k, "default field"), v) for k, v in spec.items()]

    def run(work: dict[str, Any]) -> None:
        for path, value in pairs:
            if path.get(work) is MISSING:
                path.set(work, deep_copy(value))

    text = "default " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in spec.items())
    return Compiled(run, _identity, None, False, text, (), tuple(spec))


# ---------------------------------------------------------- coerce / scale
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
            return json.dumps(value)
        return value
    if not isinstance(value, str):
        return value
    text = value.strip()
    if kind == "number" and _NUMBER.fullmatch(text):
        result = float(text)
        return _number(result) if math.isfinite(result) else value
    if kind == "integer" and _INTEGER.fullmatch(text):
        return int(text)
    if kind == "boolean" and text.lower() in ("true", "false"):
        return text.lower() == "true"
    if kind == "array" and text.startswith("["):
        try:
            parsed = json.loads(text)
        except ValueError:
            return value
        return parsed if isinstance(parsed, list) else value
    return value


def _coerce(spec: dict[str, mb.Coercion]) -> Compiled:
    pairs = [(_simple(k, "coerce field"), kind) for k, kind in spec.items()]

    def run(work: dict[str, Any]) -> None:
        for path, kind in pairs:
            value = path.get(work)
            if value is not MISSING:
                new = coerce_value(value, kind)
                if new is not value:
                    path.set(work, new)

    text = "coerce " + ", ".join(f"{k} to {kind}" for k, kind in spec.items())
    return Compiled(run, _identity, None, True, text, tuple(spec), tuple(spec))


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
    as_float = result.numerator / result.denominator
    if math.isfinite(as_float) and Fraction(repr(as_float)) == result:
        return as_float
    return None


def _scaler(path: SimplePath, factor: Fraction) -> Fn:
    def run(work: dict[str, Any]) -> None:
        value = path.get(work)
        exact = exact_number(value)
        if exact is None:
            return
        result = json_number(exact * factor)
        if result is not None:  # not representable exactly: left as the client sent it
            path.set(work, result)

    return run


def _scale(spec: dict[str, float]) -> Compiled:
    fwd: list[Fn] = []
    inv: list[Fn] = []
    for key, factor in spec.items():
        path = _simple(key, "scale field")
        frac = Fraction(str(factor))
        fwd.append(_scaler(path, frac))
        inv.append(_scaler(path, 1 / frac))
    text = "scale " + ", ".join(f"{k} by {f:g}" for k, f in spec.items())
    return Compiled(_sequence(fwd), _sequence(inv), None, True, text, tuple(spec), tuple(spec))


# ---------------------------------------------------------------- jmespath
def _jmespath(spec: mb.JmesSpec) -> Compiled:
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
    into = _simple(spec.into, "jmespath target") if spec.into is not None else None

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

    target = spec.into or "the arguments"
    why = "a JMESPath expression has no derivable inverse"
    return Compiled(run, None, why, False, f"jmespath {spec.expr!r} -> {target}", (), ())


# --------------------------------------------------------- copy / values
def _copy(spec: dict[str, str]) -> Compiled:
    pairs = [
        (_simple(src, "copy source"), _simple(dst, "copy target")) for src, dst in spec.items()
    ]

    def run(work: dict[str, Any]) -> None:
        for src, dst in pairs:
            value = src.get(work)
            if value is not MISSING and dst.get(work) is MISSING:
                dst.set(work, deep_copy(value))

    text = "copy " + ", ".join(f"{a} -> {b} when absent" for a, b in spec.items())
    return Compiled(run, _identity, None, False, text, tuple(spec), tuple(spec.values()))


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


def _values(spec: dict[str, dict[str, Any]]) -> Compiled:
    fwd: list[Fn] = []
    inv: list[Fn] = []
    why = None
    for key, table in spec.items():
        path = _simple(key, "values field")
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
    inverse = None if why else _sequence(inv)
    # Not exact: a local value that is also a table key goes back unchanged, then forward mapped.
    return Compiled(_sequence(fwd), inverse, why, False, text, tuple(spec), tuple(spec))


# -------------------------------------------------------------------- each
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


def _each(spec: mb.EachSpec) -> Compiled:
    path = _simple(spec.in_, "each field")
    inner = [compile_op(op) for op in spec.do]
    forward = _on_items(path, _sequence([c.forward for c in inner]))
    lossy = next((c for c in inner if c.inverse is None), None)
    why = f"'{lossy.text}' cannot be inverted ({lossy.why_not})" if lossy else None
    inverse = None
    if lossy is None:
        inverse = _on_items(path, _sequence([c.inverse for c in reversed(inner) if c.inverse]))
    text = f"each {spec.in_}[*]: " + "; ".join(c.text for c in inner)
    exact = all(c.exact for c in inner)
    return Compiled(forward, inverse, why, exact, text, (spec.in_,), (spec.in_,))


_BUILDERS: dict[str, Callable[[Any], Compiled]] = {
    "rename": _rename,
    "wrap": _wrap,
    "unwrap": _unwrap,
    "merge": _merge,
    "split": _split,
    "prefer": _prefer,
    "coalesce": _coalesce,
    "coerce": _coerce,
    "scale": _scale,
    "default": _default,
    "drop": _drop,
    "keep": _keep,
    "jmespath": _jmespath,
    "copy": _copy,
    "values": _values,
    "each": _each,
}


def compile_op(op: BaseModel) -> Compiled:
    """Compile one operation model; raises :class:`OpError` for a bad path or expression."""
    return _BUILDERS[mb.op_kind(op)](mb.op_spec(op))
