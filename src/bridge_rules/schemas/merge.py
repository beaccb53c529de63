"""Schema merges the conversions need: refs, ``allOf``, a root union, nullability.

Each keeps every instance the agent's schema accepts acceptable: a merged union
takes each variant's properties (differing ones as an ``anyOf``), requires only
what every variant requires, and keeps a discriminator as an ``enum``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from bridge_rules.schemas.shape import kinds

if TYPE_CHECKING:
    from bridge_rules.schemas.targets import Profile

Note = Callable[[str, str, str], None]
WRAP_KEY = "value"


def resolve_ref(root: Any, ref: str) -> Any:
    """The node a local ``#/...`` reference points to in ``root``; None if it points nowhere."""
    if not ref.startswith("#"):
        return None
    node = root
    for raw in ref[1:].split("/")[1:] if ref != "#" else []:
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def _deref(root: Any, schema: Any, depth: int = 8) -> Any:
    while depth and isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
        target = resolve_ref(root, schema["$ref"])
        if not isinstance(target, dict):
            return schema
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        schema, depth = {**target, **rest}, depth - 1
    return schema


def _is_object(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    kind = schema.get("type")
    return kind == "object" or (kind is None and "properties" in schema)


def merge_all_of(schema: dict[str, Any], root: Any) -> dict[str, Any] | None:
    """``allOf`` folded into ``schema`` when every part is an object schema; else None."""
    parts = [_deref(root, p) for p in schema["allOf"]]
    if not all(isinstance(p, dict) and (_is_object(p) or not p.get("type")) for p in parts):
        return None
    out = {k: v for k, v in schema.items() if k != "allOf"}
    props: dict[str, Any] = dict(out.get("properties") or {})
    required: list[str] = list(out.get("required") or [])
    for part in parts:
        for name, sub in (part.get("properties") or {}).items():
            props.setdefault(name, sub)
        required.extend(r for r in part.get("required", []) if r not in required)
        for key, value in part.items():
            if key not in ("properties", "required"):
                out.setdefault(key, value)
    if props:
        out["properties"] = props
    if required:
        out["required"] = required
    return out


def fold_all_of(schema: dict[str, Any], root: Any) -> dict[str, Any] | None:
    """An ``allOf`` of constraints on one value (``[{pattern: a}, {maxLength: 9}]``) folded
    into ``schema``, for targets that refuse ``allOf``; a keyword two parts give
    differently keeps the first, and the others are said in the description. None when a
    part is about an object's keys (those merge with :func:`merge_all_of`) or is not a
    schema."""
    parts = [_deref(root, p) for p in schema["allOf"]]
    if not all(isinstance(p, dict) for p in parts) or any(
        "properties" in p or p.get("type") == "object" or "$ref" in p for p in parts
    ):
        return None
    out = {k: v for k, v in schema.items() if k != "allOf"}
    rest: dict[str, Any] = {}
    for part in parts:
        for key, value in part.items():
            if key not in out:
                out[key] = value
            elif out[key] != value and key != "description":
                rest.setdefault(key, value)
    if rest:
        words = "; ".join(f"also {k}: {json.dumps(v)}" for k, v in rest.items())
        said = out.get("description")
        out["description"] = f"{said} ({words})" if isinstance(said, str) else f"({words})"
    return out


def nullable(schema: Any) -> Any:
    """``schema`` that also accepts ``null``."""
    if not isinstance(schema, dict) or "null" in kinds(schema):
        return schema
    out = dict(schema)
    kind = out.get("type")
    if isinstance(kind, str):
        out["type"] = [kind, "null"]
        if isinstance(out.get("enum"), list) and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
        return out
    if isinstance(kind, list):
        out["type"] = [*kind, "null"]
        return out
    if isinstance(out.get("anyOf"), list):
        out["anyOf"] = [*out["anyOf"], {"type": "null"}]
        return out
    return {"anyOf": [schema, {"type": "null"}]}


def _tag(schema: Any) -> tuple[bool, Any]:
    if isinstance(schema, dict):
        if "const" in schema:
            return True, schema["const"]
        values = schema.get("enum")
        if isinstance(values, list) and len(values) == 1:
            return True, values[0]
    return False, None


def _dump(value: Any) -> str:
    try:
        return json.dumps(value, sort_keys=True)
    except (RecursionError, TypeError, ValueError):  # too deep, or not JSON: only itself
        return f"<{id(value)}>"


def _discriminator(variants: list[dict[str, Any]]) -> tuple[str, list[Any]] | None:
    common = set.intersection(*(set(v.get("properties") or {}) for v in variants))
    for name in sorted(common):
        tags = [_tag(v["properties"][name]) for v in variants]
        values = [value for ok, value in tags]
        if all(ok for ok, _ in tags) and len({_dump(v) for v in values}) == len(values):
            return name, values
    return None


def _merge_variants(
    root: dict[str, Any], variants: list[dict[str, Any]]
) -> tuple[dict[str, Any], tuple[str, Mapping[str, frozenset[str]]] | None, str | None]:
    own = {k: v for k, v in root.items() if k not in ("anyOf", "oneOf")}
    base_props = dict(own.get("properties") or {})
    base_req = list(own.get("required") or [])
    parts = [{**v, "properties": {**base_props, **(v.get("properties") or {})}} for v in variants]
    found = _discriminator(parts)
    props: dict[str, Any] = {}
    for part in parts:
        for name in part["properties"]:
            if name in props:
                continue
            subs = [p["properties"][name] for p in parts if name in p["properties"]]
            distinct = list({_dump(s): s for s in subs}.values())
            props[name] = distinct[0] if len(distinct) == 1 else {"anyOf": distinct}
    variants_map = None
    if found is not None:
        name, values = found
        first = parts[0]["properties"][name]
        tag: dict[str, Any] = {"enum": values}
        if all(isinstance(v, str) for v in values):
            tag["type"] = "string"
        if isinstance(first, dict) and "description" in first:
            tag["description"] = first["description"]
        props[name] = tag
        if all(p.get("additionalProperties") is False for p in parts):
            variants_map = (
                name,
                {_dump(v): frozenset(p["properties"]) for v, p in zip(values, parts, strict=True)},
            )
    required = [
        r
        for r in dict.fromkeys(r for p in parts for r in p.get("required", []))
        if all(r in p.get("required", []) for p in parts)
    ]
    out = {**own, "type": "object", "properties": props}
    required = list(dict.fromkeys([*base_req, *required]))
    if required:
        out["required"] = required
    else:
        out.pop("required", None)
    if all(p.get("additionalProperties") is False for p in parts):
        out["additionalProperties"] = False
    else:
        out.pop("additionalProperties", None)
    said = [_said(v) for v in variants]
    if any(said) and not own.get("description"):
        out["description"] = "One of: " + " | ".join(s or "other" for s in said)
    return out, variants_map, found[0] if found else None


def _said(variant: dict[str, Any]) -> str | None:
    """How a variant is told apart in the merged description."""
    if isinstance(variant.get("description"), str):
        return str(variant["description"])
    if not variant.get("properties") and isinstance(variant.get("required"), list):
        return "with " + " and ".join(str(r) for r in variant["required"])
    return None


def _variant(root: dict[str, Any], variant: Any) -> bool:
    """A union member that merges into an object root: an object, or (when the root is an
    object) a constraint on it such as ``{required: [a]}``."""
    if _is_object(variant):
        return True
    return (
        isinstance(variant, dict)
        and _is_object(root)
        and variant.get("type") in (None, "object")
        and not any(k in variant for k in ("anyOf", "oneOf", "allOf", "not", "$ref"))
    )


def flatten_union(
    root: dict[str, Any], profile: Profile, note: Note
) -> tuple[dict[str, Any], str | None, tuple[str, Mapping[str, frozenset[str]]] | None]:
    """The root as one object: (schema, wrap key or None, flattened variants or None)."""
    if profile.has("flatten-root-union") and isinstance(root.get("allOf"), list):
        merged_all = merge_all_of(root, root)
        if merged_all is not None:
            note("flatten-root-union", "", "root allOf merged into one object")
            root = merged_all
    which = "anyOf" if "anyOf" in root else "oneOf"
    union = root.get(which)
    if profile.has("flatten-root-union") and isinstance(union, list) and union:
        variants = [_deref(root, v) for v in union]
        if all(_variant(root, v) for v in variants):
            merged, variants_map, tag = _merge_variants(root, variants)
            kept = f", discriminator '{tag}' kept as an enum" if tag else ""
            note("flatten-root-union", "", f"root {which} of {len(variants)} objects merged{kept}")
            return merged, None, variants_map
    if not profile.has("root-object") or root.get("type") == "object":
        return root, None, None
    if root.get("type") is None and not any(
        k in root for k in ("anyOf", "oneOf", "allOf", "$ref", "enum", "const", "items")
    ):
        note("root-object", "", "type: object added at the root")
        return {**root, "type": "object"}, None, None
    defs: dict[str, Any] = {k: root[k] for k in ("$defs", "definitions") if k in root}
    inner = {k: v for k, v in root.items() if k not in defs}
    wrapped: dict[str, Any] = {
        "type": "object",
        "properties": {WRAP_KEY: inner},
        "required": [WRAP_KEY],
        "additionalProperties": False,
        **defs,
    }
    note("root-object", "", f"a root that is not an object sent as the property '{WRAP_KEY}'")
    return wrapped, WRAP_KEY, None
