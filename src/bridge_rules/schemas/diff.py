"""What changed between two versions of one tool's input schema, field by field.

Fields are dotted paths (``todos[].activeForm``); each carries whether it is
required, its JSON types, its enum values and its structure (object, array,
union or scalar), so a drift report can say a field became required, changed
type, gained or lost enum values, or changed shape. Local ``$ref``s are followed
(a bounded number of times, so a recursive schema ends).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from bridge_rules.schemas.merge import resolve_ref

_REF_HOPS = 8
_DEPTH = 64


@dataclass(frozen=True)
class Field:
    required: bool
    types: tuple[str, ...]
    enum: tuple[str, ...] | None
    structure: str


def _deref(root: Any, schema: Any) -> Any:
    for _ in range(_REF_HOPS):
        if not (isinstance(schema, dict) and isinstance(schema.get("$ref"), str)):
            break
        target = resolve_ref(root, schema["$ref"])
        if not isinstance(target, dict):
            break
        schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
    return schema


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _types(schema: dict[str, Any], depth: int = 0) -> tuple[str, ...]:
    kind = schema.get("type")
    if isinstance(kind, str):
        out = {kind}
    elif isinstance(kind, list):
        out = {k for k in kind if isinstance(k, str)}
    else:
        out = set()
    for key in ("anyOf", "oneOf"):
        for branch in _list(schema.get(key)) if depth < _DEPTH else []:
            if isinstance(branch, dict):
                out.update(_types(branch, depth + 1))
    if schema.get("nullable") is True:
        out.add("null")
    return tuple(sorted(out))


def _enum(schema: dict[str, Any]) -> tuple[str, ...] | None:
    values: list[Any] = []
    for node in [schema, *_list(schema.get("anyOf")), *_list(schema.get("oneOf"))]:
        if not isinstance(node, dict):
            continue
        if isinstance(node.get("enum"), list):
            values.extend(node["enum"])
        if "const" in node:
            values.append(node["const"])
    if not values:
        return None
    try:
        return tuple(sorted({json.dumps(v, sort_keys=True) for v in values}))
    except (RecursionError, TypeError, ValueError):
        return None


def _structure(schema: dict[str, Any]) -> str:
    if any(isinstance(schema.get(k), list) and len(schema[k]) > 1 for k in ("anyOf", "oneOf")):
        return "union"
    types = set(_types(schema)) - {"null"}
    if "properties" in schema or types == {"object"}:
        return "object"
    if "items" in schema or types == {"array"}:
        return "array"
    return "scalar"


def fields(schema: Any, root: Any = None, prefix: str = "", hops: int = 0) -> dict[str, Field]:
    """Every dotted field path of ``schema`` with what it says about that field."""
    root = schema if root is None else root
    out: dict[str, Field] = {}
    schema = _deref(root, schema)
    if not isinstance(schema, dict) or hops > _REF_HOPS or prefix.count(".") > _DEPTH:
        return out
    required = {r for r in _list(schema.get("required")) if isinstance(r, str)}
    props = dict(_map(schema.get("properties")))
    for key in ("anyOf", "oneOf", "allOf"):
        for raw_branch in _list(schema.get(key)):
            branch = _deref(root, raw_branch)
            if isinstance(branch, dict):
                for name, sub in _map(branch.get("properties")).items():
                    props.setdefault(name, sub)
    for name, raw in props.items():
        sub = _deref(root, raw)
        if not isinstance(sub, dict):
            continue
        path = f"{prefix}{name}"
        out[path] = Field(name in required, _types(sub), _enum(sub), _structure(sub))
        deeper = hops + (1 if isinstance(raw, dict) and "$ref" in raw else 0)
        out.update(fields(sub, root, path + ".", deeper))
        items = _deref(root, sub.get("items"))
        if isinstance(items, dict):
            out.update(fields(items, root, path + "[].", deeper))
    return out


def changes(old: Any, new: Any) -> Iterator[tuple[str, str, str]]:
    """(kind, field, what changed) for every difference between two schemas of one tool."""
    before, after = fields(old), fields(new)
    for name in sorted(after.keys() - before.keys()):
        need = " (required)" if after[name].required else ""
        yield "field-added", name, f"{name} added{need}"
    for name in sorted(before.keys() - after.keys()):
        yield "field-removed", name, f"{name} removed"
    for name in sorted(before.keys() & after.keys()):
        a, b = before[name], after[name]
        if a.required != b.required:
            yield (
                "field-required",
                name,
                f"{name} is {'required' if b.required else 'optional'} now",
            )
        if a.structure != b.structure:
            yield "field-structure", name, f"{name} is {_an(b.structure)} now (was {a.structure})"
        elif a.types != b.types:
            was, now = "|".join(a.types) or "any", "|".join(b.types) or "any"
            yield "field-type", name, f"{name}: type {was} -> {now}"
        if a.enum != b.enum and (a.enum or b.enum):
            yield "field-enum", name, f"{name}: enum {_enum_delta(a.enum, b.enum)}"


def _an(structure: str) -> str:
    return {"object": "an object", "array": "an array", "union": "a union"}.get(
        structure, structure
    )


def _enum_delta(old: tuple[str, ...] | None, new: tuple[str, ...] | None) -> str:
    if old is None:
        return "added: " + " ".join(new or ())
    if new is None:
        return "removed (any value now)"
    added = [f"+{v}" for v in new if v not in old]
    removed = [f"-{v}" for v in old if v not in new]
    return " ".join(added + removed)
