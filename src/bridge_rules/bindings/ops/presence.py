"""Operations that decide which fields exist: ``prefer``, ``coalesce``, ``keep``, ``drop``,
``default`` and ``copy``.

Each adds, removes or chooses a field, so replay cannot always give back what was sent:
all of them ask for ``losses:`` (BR408). ``drop``, ``default`` and ``copy`` have nothing to
undo (their inverse is the identity); the others have no inverse at all (BR406).
"""

from __future__ import annotations

import json
from typing import Any

from bridge_rules import model_bindings as mb
from bridge_rules.bindings.ops.base import (
    Compiled,
    CompileNested,
    Operation,
    any_path,
    copied_tops,
    deep_copy,
    field_path,
    identity,
)
from bridge_rules.bindings.paths import MISSING, JsonPath, SimplePath
from bridge_rules.steps import Fn


def _present(value: Any) -> bool:
    return value is not MISSING and value is not None and value not in ("", [], {})


class Prefer(Operation[dict[str, str]]):
    model = mb.PreferOp
    loses = True

    @classmethod
    def compile(cls, spec: dict[str, str], nested: CompileNested) -> Compiled:
        pairs = list(spec.items())

        def run(work: dict[str, Any]) -> None:
            for winner, loser in pairs:
                if loser in work and _present(work.get(winner, MISSING)):
                    del work[loser]

        return Compiled(
            forward=run,
            inverse=None,
            why_not="the dropped field cannot be restored",
            exact=False,
            text="prefer " + ", ".join(f"{w} over {lo}" for w, lo in pairs),
            reads=(*spec, *spec.values()),
            writes=tuple(spec),
        )


class Coalesce(Operation[mb.CoalesceSpec]):
    model = mb.CoalesceOp
    loses = True

    @classmethod
    def compile(cls, spec: mb.CoalesceSpec, nested: CompileNested) -> Compiled:
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

        return Compiled(
            forward=run,
            inverse=None,
            why_not="the sources that lost cannot be restored",
            exact=False,
            text=f"coalesce {' ?? '.join(sources)} -> {into}",
            reads=tuple(sources),
            writes=(into,),
        )


class Keep(Operation[list[str]]):
    model = mb.KeepOp
    loses = True

    @classmethod
    def compile(cls, spec: list[str], nested: CompileNested) -> Compiled:
        kept = frozenset(spec)

        def run(work: dict[str, Any]) -> None:
            for key in [k for k in work if k not in kept]:
                del work[key]

        return Compiled(
            forward=run,
            inverse=None,
            why_not="every other field is removed",
            exact=False,
            text="keep only " + ", ".join(spec),
            writes=tuple(spec),
        )


class Drop(Operation[list[str] | dict[str, Any]]):
    """A list removes paths (JSONPath allowed); a mapping removes fields equal to a value."""

    model = mb.DropOp
    loses = True

    @classmethod
    def compile(cls, spec: list[str] | dict[str, Any], nested: CompileNested) -> Compiled:
        if isinstance(spec, list):
            return Compiled(
                forward=_drop_paths([any_path(p) for p in spec]),
                inverse=identity,
                exact=True,
                text="drop " + ", ".join(spec),
                reads=tuple(spec),
            )
        conditions = [(field_path(k, "drop field"), v) for k, v in spec.items()]

        def run_when(work: dict[str, Any]) -> None:
            for path, value in conditions:
                current = path.get(work)
                if current is not MISSING and type(current) is type(value) and current == value:
                    path.pop(work)

        return Compiled(
            forward=run_when,
            inverse=identity,
            exact=True,
            text="drop " + ", ".join(f"{k} when {json.dumps(v)}" for k, v in spec.items()),
            reads=tuple(spec),
        )


def _drop_paths(paths: list[SimplePath | JsonPath]) -> Fn:
    def run(work: dict[str, Any]) -> None:
        for path in paths:
            if isinstance(path, SimplePath):
                path.pop(work)
                continue
            copied_tops(work)
            for match in path.parents(work):
                if isinstance(match.value, dict):
                    match.value.pop(path.last, None)

    return run


class Default(Operation[dict[str, Any]]):
    model = mb.DefaultOp
    loses = True

    @classmethod
    def compile(cls, spec: dict[str, Any], nested: CompileNested) -> Compiled:
        pairs = [(field_path(k, "default field"), v) for k, v in spec.items()]

        def run(work: dict[str, Any]) -> None:
            for path, value in pairs:
                if path.get(work) is MISSING:
                    path.set(work, deep_copy(value))

        return Compiled(
            forward=run,
            inverse=identity,
            exact=False,
            text="default " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in spec.items()),
            writes=tuple(spec),
        )


class Copy(Operation[dict[str, str]]):
    model = mb.CopyOp
    loses = True

    @classmethod
    def compile(cls, spec: dict[str, str], nested: CompileNested) -> Compiled:
        pairs = [
            (field_path(src, "copy source"), field_path(dst, "copy target"))
            for src, dst in spec.items()
        ]

        def run(work: dict[str, Any]) -> None:
            for src, dst in pairs:
                value = src.get(work)
                if value is not MISSING and dst.get(work) is MISSING:
                    dst.set(work, deep_copy(value))

        return Compiled(
            forward=run,
            inverse=identity,
            exact=False,
            text="copy " + ", ".join(f"{a} -> {b} when absent" for a, b in spec.items()),
            reads=tuple(spec),
            writes=tuple(spec.values()),
        )
