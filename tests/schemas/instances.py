"""Hypothesis strategies: tool schemas with the features conversions handle, and instances.

``schemas()`` draws object schemas with optional and nullable fields, open maps,
untyped values, enums of mixed types (and of arrays), ``const``, unions of arrays, unions of
constraints on a typed node (``{required: [a]}`` branches, nested too),
``$ref`` into ``$defs`` (also recursive), ``oneOf``, draft-04 exclusive bounds and root
unions with a discriminator. ``instances(schema)`` draws values for a schema; the tests keep
only the ones a validator accepts, so the property is over valid instances.
``as_json_schema`` reads Gemini's ``nullable`` as JSON Schema, to validate against.
"""

from __future__ import annotations

import json
import string
from typing import Any

from hypothesis import strategies as st

NAMES = st.text(string.ascii_lowercase + "_", min_size=1, max_size=6)
_JSON_LEAF = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.text(string.ascii_letters, max_size=4)
)
JSON = st.recursive(
    _JSON_LEAF,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(NAMES, inner, max_size=3)),
    max_leaves=6,
)


def _leaf() -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        st.just({"type": "string"}),
        st.builds(lambda n: {"type": "string", "minLength": n}, st.integers(0, 2)),
        st.just({"type": "string", "format": "uri", "description": "a link"}),
        st.just({"type": "integer", "minimum": 0, "exclusiveMinimum": True}),
        st.just({"type": "number", "maximum": 10}),
        st.just({"type": "boolean", "default": False}),
        st.just({"type": ["string", "null"]}),
        st.just({"enum": [1, 2, "three"]}),
        st.just({"type": "integer", "enum": [10, 20]}),
        st.just({"const": "fixed"}),
        st.just({"const": 7}),
        st.just({}),
        st.just({"type": "object", "additionalProperties": {"type": "string"}}),
        st.just({"type": "array"}),
        st.just({"$ref": "#/$defs/point"}),
        st.just({"$ref": "#/$defs/tree"}),
        st.just({"oneOf": [{"type": "string"}, {"type": "integer"}]}),
        st.just({"anyOf": [{"type": "string"}, {"type": "null"}]}),
        # arrays typed by their own ``type`` (with null), by union branches, by values
        st.just({"type": ["array", "null"]}),
        st.just(
            {
                "anyOf": [
                    {"type": "array", "items": {"type": "integer"}},
                    {"type": "array", "items": {"type": "array"}},
                ]
            }
        ),
        st.just({"enum": [[1], ["a", None], []]}),
        st.just({"const": ["x"]}),
        # a union of constraints on the node's own type (no type in the branches)
        st.just({"type": "string", "anyOf": [{"minLength": 2}, {"format": "uri"}]}),
        st.just({"type": "integer", "anyOf": [{"minimum": 5}, {"maximum": 0}]}),
    )


def _object(children: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    def build(props: dict[str, Any], required: list[bool], closed: bool) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "object", "properties": props}
        req = [name for name, flag in zip(props, required, strict=False) if flag]
        if req:
            out["required"] = req
        if closed:
            out["additionalProperties"] = False
        return out

    return st.builds(
        build,
        st.dictionaries(NAMES, children, min_size=1, max_size=4),
        st.lists(st.booleans(), min_size=4, max_size=4),
        st.booleans(),
    )


def _either_required(schema: dict[str, Any]) -> dict[str, Any]:
    """An object that needs at least one of its first two properties (``anyOf`` of required)."""
    names = list(schema["properties"])[:2]
    return {**schema, "anyOf": [{"required": [n]} for n in names]}


_NODE = st.recursive(
    _leaf(),
    lambda inner: st.one_of(
        _object(inner),
        _object(inner).map(_either_required),
        st.builds(lambda i: {"type": "array", "items": i}, inner),
    ),
    max_leaves=8,
)
DEFS = {
    "point": {
        "type": "object",
        "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
        "required": ["x"],
        "additionalProperties": False,
    },
    "tree": {
        "type": "object",
        "properties": {
            "label": {"type": "string"},
            "kids": {"type": "array", "items": {"$ref": "#/$defs/tree"}},
        },
        "additionalProperties": False,
    },
}


def _union(variants: list[dict[str, Any]]) -> dict[str, Any]:
    tagged = []
    for i, variant in enumerate(variants):
        props = {"op": {"const": f"op{i}"}, **variant["properties"]}
        tagged.append(
            {
                **variant,
                "properties": props,
                "required": ["op", *variant.get("required", [])],
                "additionalProperties": False,
            }
        )
    return {"oneOf": tagged}


def _all_of(parts: list[dict[str, Any]]) -> dict[str, Any]:
    return {"allOf": parts}


def schemas() -> st.SearchStrategy[dict[str, Any]]:
    """Root schemas: a plain object, a union of objects tagged by ``op``, an object that
    needs one of two fields, or an ``allOf`` of objects."""
    root = st.one_of(
        _object(_NODE),
        st.lists(_object(_NODE), min_size=2, max_size=3).map(_union),
        _object(_NODE).map(_either_required),
        st.lists(_object(_NODE), min_size=2, max_size=2).map(_all_of),
    )
    return root.map(lambda s: {**s, "$defs": DEFS})


def instances(schema: Any, root: Any, depth: int = 0) -> st.SearchStrategy[Any]:
    """Values shaped by ``schema``; may be invalid (callers filter with a validator)."""
    if depth > 2:  # recursion through $ref: stop with what the schema allows at its leaves
        return st.just([]) if schema.get("type") == "array" else st.nothing()
    if not isinstance(schema, dict) or schema == {}:
        return JSON
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return instances(root.get("$defs", {}).get(name, {}), root, depth + 1)
    if "allOf" in schema and "type" not in schema:
        parts = [p for p in schema["allOf"] if isinstance(p, dict)]
        merged = {
            "type": "object",
            "properties": {k: v for p in parts for k, v in (p.get("properties") or {}).items()},
            "required": [r for p in parts for r in p.get("required", [])],
        }
        return instances(merged, root, depth)
    if ("properties" in schema or "type" in schema) and ("anyOf" in schema or "oneOf" in schema):
        own = {k: v for k, v in schema.items() if k not in ("anyOf", "oneOf")}
        return instances(own, root, depth)
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    for key in ("oneOf", "anyOf"):
        if key in schema:
            return st.one_of(*[instances(b, root, depth) for b in schema[key]])
    kind = schema.get("type")
    if isinstance(kind, list):
        return st.one_of(*[instances({**schema, "type": k}, root, depth) for k in kind])
    if kind == "null":
        return st.none()
    if kind == "string":
        low = schema.get("minLength", 0)
        return st.text(
            string.ascii_letters + ":/.",
            min_size=low,
            max_size=max(low, min(schema.get("maxLength", 8), 8)),
        )
    if kind == "integer":
        low = schema.get("minimum", -3)
        return st.integers(low, max(low, schema.get("maximum", low + 15)))
    if kind == "number":
        low = schema.get("minimum", -3)
        high = max(low, schema.get("maximum", low + 15))
        return st.one_of(st.integers(low, high), st.floats(low, high, allow_nan=False))
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        items = schema.get("items", {})
        low = schema.get("minItems", 0)
        high = max(low, min(schema.get("maxItems", 3), 3))
        unique = json.dumps if schema.get("uniqueItems") else None
        if depth > 1 and not low:  # inside a recursion: end it with an empty list
            return st.just([])
        return st.lists(
            instances(items, root, depth), min_size=low, max_size=high, unique_by=unique
        )
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        required = set(schema.get("required", []))
        extra = schema.get("additionalProperties", True)
        fixed = {k: instances(v, root, depth) for k, v in props.items() if k in required}
        optional = {k: instances(v, root, depth) for k, v in props.items() if k not in required}
        base = st.fixed_dictionaries(fixed, optional=optional)
        if extra is False or props:
            return base
        values = instances(extra, root, depth) if isinstance(extra, dict) else JSON
        return st.dictionaries(NAMES, values, max_size=3)
    return JSON


def as_json_schema(schema: Any) -> Any:
    """Gemini's OpenAPI ``nullable: true`` read as JSON Schema (for validation only)."""
    if isinstance(schema, list):
        return [as_json_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: as_json_schema(v) for k, v in schema.items() if k != "nullable"}
    if schema.get("nullable") is True:
        return {"anyOf": [out, {"type": "null"}]}
    return out


def declared_only(schema: Any, root: bool = True) -> Any:
    """``schema`` with objects closed where ``close-objects`` closes them (documented loss:
    keys an object does not declare cannot be sent once it is strict)."""
    if isinstance(schema, list):
        return [declared_only(s, False) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {
        k: declared_only(v, False) if k not in ("properties", "$defs") else v
        for k, v in schema.items()
    }
    for key in ("properties", "$defs"):
        if isinstance(schema.get(key), dict):
            out[key] = {n: declared_only(v, False) for n, v in schema[key].items()}
    if (root or schema.get("properties")) and schema.get("type") in ("object", None):
        parts = [p for k in ("anyOf", "oneOf", "allOf") for p in schema.get(k) or []]
        if root and parts:
            # The root's keys are its union's or allOf's too (the target merges them into one
            # object): ``additionalProperties: false`` here would refuse each of those keys,
            # and every call of a union root would be discarded before it was checked.
            named = [schema, *(p for p in parts if isinstance(p, dict))]
            names = {n for p in named if isinstance(p.get("properties"), dict)
                     for n in p["properties"]}  # fmt: skip
            out["propertyNames"] = {"enum": sorted(names)}
        else:
            out["additionalProperties"] = False
    return out
