"""What a target would reject in a tool schema, by JSON pointer (for ``lint``).

The rules are the ones the conversion meets (docs/schemas.md, with sources);
``lint --target`` reports them for the tools of the pins the rules name, with
whether the rules' own ``schemas:`` setting converts them away.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from bridge_rules.schemas.targets import GEMINI_KEYWORDS, profile

Problem = tuple[str, str]
"""(JSON pointer, what the target says is wrong there)."""

_CHILD_MAPS = ("properties", "$defs", "definitions", "patternProperties")
_CHILD_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_CHILD_ONE = ("items", "additionalProperties", "not", "contains", "propertyNames")


_DEPTH = 128


def _walk(schema: Any, ptr: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    if not isinstance(schema, dict) or ptr.count("/") > _DEPTH:
        return
    yield ptr, schema
    for key in _CHILD_MAPS:
        for name, sub in (
            (schema.get(key) or {}).items() if isinstance(schema.get(key), dict) else ()
        ):
            yield from _walk(sub, f"{ptr}/{key}/{name}")
    for key in _CHILD_LISTS:
        for i, sub in enumerate(schema.get(key) or []) if isinstance(schema.get(key), list) else ():
            yield from _walk(sub, f"{ptr}/{key}/{i}")
    for key in _CHILD_ONE:
        yield from _walk(schema.get(key), f"{ptr}/{key}")


def _root(schema: Any) -> Iterator[Problem]:
    if not isinstance(schema, dict) or schema.get("type") != "object":
        yield "", "the root must be type: object"
    elif any(k in schema for k in ("anyOf", "oneOf", "allOf")):
        yield "", "the root must not be a union (anyOf/oneOf/allOf)"


def _typed(node: dict[str, Any]) -> bool:
    return any(k in node for k in ("type", "anyOf", "oneOf", "allOf", "enum", "const", "$ref"))


def _array_items(ptr: str, node: dict[str, Any]) -> Iterator[Problem]:
    if node.get("type") == "array" and not (
        isinstance(node.get("items"), dict) and _typed(node["items"])
    ):
        yield ptr, "an array needs typed items"


def _anthropic(schema: Any) -> Iterator[Problem]:
    yield from _root(schema)
    for ptr, node in _walk(schema):
        for key in ("exclusiveMinimum", "exclusiveMaximum"):
            if isinstance(node.get(key), bool):
                yield ptr, f"boolean {key} is draft-04, not draft 2020-12"


def _openai(schema: Any) -> Iterator[Problem]:
    yield from _root(schema)
    strict = profile("openai-strict")
    for ptr, node in _walk(schema):
        for key, value in node.items():
            if key != "description" and strict.refused(key, value):
                yield ptr, f"{key} is not supported in strict mode"
        if "oneOf" in node:
            yield ptr, "oneOf is not permitted (anyOf is)"
        if "$ref" in node and len(node) > 1:
            yield ptr, "$ref cannot have sibling keywords"
        if node.get("type") == "object" or "properties" in node:
            if node.get("additionalProperties") is not False:
                yield ptr, "every object needs additionalProperties: false"
            missing = [n for n in node.get("properties") or {} if n not in node.get("required", [])]
            if missing:
                yield ptr, "every property must be required (optional: " + ", ".join(missing) + ")"
        elif ptr and not _typed(node):
            yield ptr, "a value needs a type"
        yield from _array_items(ptr, node)


def _gemini(schema: Any) -> Iterator[Problem]:
    yield from _root(schema)
    for ptr, node in _walk(schema):
        for key in sorted(node.keys() - GEMINI_KEYWORDS):
            yield ptr, f"{key} is not a field of Gemini's Schema"
        if isinstance(node.get("type"), list):
            yield ptr, "type cannot be a list (nullable: true is the way)"
        values = node.get("enum")
        if isinstance(values, list) and not all(isinstance(v, str) for v in values):
            yield ptr, "enum is only for strings"
        yield from _array_items(ptr, node)


def _bedrock(schema: Any) -> Iterator[Problem]:
    yield from _root(schema)
    for ptr, node in _walk(schema):
        for key in ("$ref", "oneOf"):
            if key in node:
                yield ptr, f"{key} is not supported by every Converse model"
        yield from _array_items(ptr, node)


_RULES = {"anthropic": _anthropic, "openai-strict": _openai, "gemini": _gemini, "bedrock": _bedrock}


def rejects(target: str, schema: Any) -> list[Problem]:
    """Every place ``target`` would refuse ``schema``; empty when it accepts it."""
    try:
        return list(dict.fromkeys(_RULES[target](schema)))
    except (TypeError, ValueError, AttributeError, LookupError, RecursionError):
        return [("", "not a JSON Schema (a keyword has a value of the wrong type)")]
