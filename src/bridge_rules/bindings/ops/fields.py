"""Operations that move fields: ``rename``, and ``wrap``/``unwrap`` (fields <-> one array item).

All three are exact: replay gives back what was sent, so a binding made of them needs no
``losses:``.
"""

from __future__ import annotations

from typing import Any

from bridge_rules import model_bindings as mb
from bridge_rules.bindings.ops.base import (
    Compiled,
    CompileNested,
    Operation,
    any_path,
    copied_tops,
    field_path,
    sequence,
)
from bridge_rules.bindings.paths import MISSING, JsonPath, SimplePath
from bridge_rules.steps import Fn


class Rekey:
    """Top-level keys renamed in place, order kept: an operation (:data:`Fn`) that history
    replay also recognises, to rename a call's arguments in one comprehension instead of a
    copy and a rename in place (:func:`bridge_rules.bindings.adapter.history_converter`)."""

    __slots__ = ("keys", "mapping")

    def __init__(self, mapping: dict[str, str]) -> None:
        self.mapping = mapping
        self.keys = frozenset(mapping)

    def __call__(self, work: dict[str, Any]) -> None:
        if self.keys.isdisjoint(work):  # C-level scan; this runs once per replayed call
            return
        items = list(work.items())
        work.clear()
        get = self.mapping.get
        for key, value in items:
            work[get(key, key)] = value

    def renamed(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """A new dict with the keys renamed (the same keys, values and order as a copy run
        through :meth:`__call__`), or ``arguments`` itself when no key is renamed."""
        if self.keys.isdisjoint(arguments):
            return arguments
        get = self.mapping.get
        return {get(key, key): value for key, value in arguments.items()}


def _rekey(mapping: dict[str, str]) -> Fn:
    return Rekey(mapping)


def _move(src: SimplePath | JsonPath, dst: str) -> Fn:
    if isinstance(src, JsonPath):
        rekey = _rekey({src.last: dst})

        def run_json(work: dict[str, Any]) -> None:
            copied_tops(work)
            for match in src.parents(work):
                if isinstance(match.value, dict):
                    rekey(match.value)

        return run_json
    target = field_path(dst, "rename target")

    def run(work: dict[str, Any]) -> None:
        value = src.pop(work)
        if value is not MISSING:
            target.set(work, value)

    return run


class Rename(Operation[dict[str, str]]):
    """Top-level renames keep key order (one pass over the keys); paths move one by one."""

    model = mb.RenameOp

    @classmethod
    def compile(cls, spec: dict[str, str], nested: CompileNested) -> Compiled:
        text = "rename " + ", ".join(f"{a} -> {b}" for a, b in spec.items())
        reads, writes = tuple(spec), tuple(spec.values())
        paths = {src: any_path(src) for src in spec}
        flat = all(isinstance(p, SimplePath) and len(p.keys) == 1 for p in paths.values()) and all(
            "." not in dst and not dst.startswith("$") for dst in spec.values()
        )
        why = None
        if len(set(spec.values())) != len(spec):
            why = "two fields are renamed to the same field"
        if flat:
            inverse = None if why else _rekey({b: a for a, b in spec.items()})
            forward = _rekey(spec)
        else:
            forward = sequence([_move(paths[src], dst) for src, dst in spec.items()])
            back = _moved_back(spec, paths)  # built even when unused: its paths are checked
            inverse = None if why else back
        return Compiled(
            forward=forward,
            inverse=inverse,
            inverse_needs=frozenset(spec.values()) if flat else None,
            why_not=why,
            exact=True,
            text=text,
            reads=reads,
            writes=writes,
            spellings=tuple((b, a) for a, b in spec.items() if not a.startswith("$")),
        )


def _in_item(array: str, fields: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """(local, wire) spellings of fields that live in one item of ``array`` on the local side:
    ``edits[].oldText``, ``edits[0].oldText`` and a bare ``oldText`` all name ``old_string``."""
    out: list[tuple[str, str]] = []
    for wire, local in fields.items():
        out += [(f"{array}[].{local}", wire), (f"{array}[0].{local}", wire), (local, wire)]
    return tuple(out)


def _moved_back(spec: dict[str, str], paths: dict[str, SimplePath | JsonPath]) -> Fn:
    back: list[Fn] = []
    for src, dst in reversed(spec.items()):
        path = paths[src]
        if isinstance(path, JsonPath):
            inv_src = any_path(path.text[: -len(path.last)] + dst)
            back.append(_move(inv_src, path.last))
        else:
            back.append(_move(field_path(dst, "rename target"), src))
    return sequence(back)


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


class Wrap(Operation[mb.WrapSpec]):
    model = mb.WrapOp

    @classmethod
    def compile(cls, spec: mb.WrapSpec, nested: CompileNested) -> Compiled:
        back = {v: k for k, v in spec.fields.items()}
        return Compiled(
            forward=_wrap_fn(spec.into, spec.fields),
            inverse=_unwrap_fn(spec.into, back),
            inverse_needs=frozenset([spec.into, *back]),
            exact=True,
            text=f"wrap {', '.join(spec.fields)} -> {spec.into}[] as {{{', '.join(back)}}}",
            reads=tuple(spec.fields),
            writes=(spec.into,),
            spellings=_in_item(spec.into, spec.fields),
        )


class Unwrap(Operation[mb.UnwrapSpec]):
    model = mb.UnwrapOp

    @classmethod
    def compile(cls, spec: mb.UnwrapSpec, nested: CompileNested) -> Compiled:
        back = {v: k for k, v in spec.fields.items()}
        return Compiled(
            forward=_unwrap_fn(spec.from_, spec.fields),
            inverse=_wrap_fn(spec.from_, back),
            exact=True,
            text=f"unwrap {spec.from_}[0] -> {', '.join(spec.fields.values())}",
            reads=(spec.from_,),
            writes=tuple(spec.fields.values()),
            spellings=tuple((loc, f"{spec.from_}[].{key}") for key, loc in spec.fields.items()),
        )
