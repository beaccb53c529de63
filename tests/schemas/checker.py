"""Each target's documented schema rules, written independently of the converter.

The rules come from the providers' documentation and the converter libraries that
follow it (docs/schemas.md lists them with their sources). ``problems(target, s)``
returns every rule ``s`` breaks, as ``pointer: rule`` strings; a converted schema
must have none.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import jsonschema

OPENAI_UNSUPPORTED = {
    "minLength",
    "maxLength",
    "patternProperties",
    "unevaluatedProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "unevaluatedItems",
    "contains",
    "minContains",
    "maxContains",
    "uniqueItems",
    "default",
    "oneOf",
    "$ref",
}
OPENAI_FORMATS = {
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
}
GEMINI_FIELDS = {
    "type",
    "format",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "propertyOrdering",
    "items",
    "anyOf",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "minProperties",
    "maxProperties",
}
GEMINI_TYPES = {"string", "number", "integer", "boolean", "array", "object"}
_SUBSCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMA_ONE = (
    "items",
    "additionalProperties",
    "not",
    "contains",
    "propertyNames",
    "if",
    "then",
    "else",
)


def nodes(schema: Any, ptr: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every schema object in ``schema`` with its JSON pointer."""
    if not isinstance(schema, dict):
        return
    yield ptr, schema
    for key in _SUBSCHEMA_MAPS:
        if isinstance(schema.get(key), dict):
            for name, sub in schema[key].items():
                yield from nodes(sub, f"{ptr}/{key}/{name}")
    for key in _SUBSCHEMA_LISTS:
        if isinstance(schema.get(key), list):
            for i, sub in enumerate(schema[key]):
                yield from nodes(sub, f"{ptr}/{key}/{i}")
    for key in _SUBSCHEMA_ONE:
        if isinstance(schema.get(key), dict):
            yield from nodes(schema[key], f"{ptr}/{key}")


def _is_object(node: dict[str, Any]) -> bool:
    kind = node.get("type")
    return kind == "object" or (isinstance(kind, list) and "object" in kind)


def anthropic(schema: Any) -> Iterator[str]:
    if not isinstance(schema, dict) or schema.get("type") != "object":
        yield "/: the root must be type: object"
        return
    for key in ("oneOf", "anyOf", "allOf"):
        if key in schema:
            yield f"/: root {key} is rejected"
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        yield f"/{'/'.join(map(str, exc.path))}: not draft 2020-12 ({exc.message})"


def openai_strict(schema: Any) -> Iterator[str]:
    if not isinstance(schema, dict) or schema.get("type") != "object":
        yield "/: the root must be a non-nullable object"
        return
    if "anyOf" in schema:
        yield "/: the root must not be anyOf"
    for ptr, node in nodes(schema):
        for key in OPENAI_UNSUPPORTED & node.keys():
            yield f"{ptr}: {key} is not supported in strict mode"
        if "format" in node and node["format"] not in OPENAI_FORMATS:
            yield f"{ptr}: format {node['format']} is not supported"
        if isinstance(node.get("pattern"), str) and re.search(r"\(\?<?[=!]", node["pattern"]):
            yield f"{ptr}: pattern uses look-around"
        if not any(k in node for k in ("type", "anyOf", "enum", "const")):
            yield f"{ptr}: every schema needs a type"
        if _is_object(node):
            if node.get("additionalProperties") is not False:
                yield f"{ptr}: objects need additionalProperties: false"
            if "properties" not in node:
                yield f"{ptr}: objects must carry a properties key"
            names = list(node.get("properties") or {})
            if sorted(node.get("required", [])) != sorted(names):
                yield f"{ptr}: every property must be listed in required"
        kind = node.get("type")
        if (kind == "array" or (isinstance(kind, list) and "array" in kind)) and not (
            isinstance(node.get("items"), dict) or "prefixItems" in node
        ):
            yield f"{ptr}: arrays need typed items"


def gemini(schema: Any) -> Iterator[str]:
    """The OpenAPI 3.0 subset of ``parameters`` (the stricter of Gemini's two fields)."""
    if not isinstance(schema, dict) or schema.get("type") != "object":
        yield "/: the root must be type: object"
        return
    for ptr, node in nodes(schema):
        for key in node.keys() - GEMINI_FIELDS:
            yield f"{ptr}: {key} is not a Schema field"
        kind = node.get("type")
        if kind is not None and (not isinstance(kind, str) or kind not in GEMINI_TYPES):
            yield f"{ptr}: type must be one of {sorted(GEMINI_TYPES)}, not {kind!r}"
        if "enum" in node and (
            kind != "string" or not all(isinstance(v, str) for v in node["enum"])
        ):
            yield f"{ptr}: enum is only for STRING"
        if "format" in node:
            yield f"{ptr}: string format must go into the description"
        if kind == "array" and not isinstance(node.get("items"), dict):
            yield f"{ptr}: arrays need items"
        if kind is None and "anyOf" not in node:
            yield f"{ptr}: every schema needs a type"


def bedrock(schema: Any) -> Iterator[str]:
    if not isinstance(schema, dict) or schema.get("type") != "object":
        yield "/: a top-level object is required"
        return
    for ptr, node in nodes(schema):
        if "$ref" in node:
            yield f"{ptr}: $ref is not supported"
        if "oneOf" in node:
            yield f"{ptr}: oneOf is not supported"
        items = node.get("items")
        if node.get("type") == "array" and not (
            isinstance(items, dict) and items.keys() & {"type", "anyOf", "enum", "const"}
        ):
            yield f"{ptr}: arrays need typed items"


CHECKERS = {
    "anthropic": anthropic,
    "openai-strict": openai_strict,
    "gemini": gemini,
    "bedrock": bedrock,
}


def problems(target: str, schema: Any) -> list[str]:
    return list(CHECKERS[target](schema))
