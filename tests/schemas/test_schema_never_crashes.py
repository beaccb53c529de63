"""A tool schema is whatever a client sends: conversion, lint and drift never raise on it."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.budget import examples

from bridge_rules.schemas import TARGETS, convert, profile
from bridge_rules.schemas.diff import changes
from bridge_rules.schemas.rejects import rejects

KEYS = st.sampled_from(
    [
        "type",
        "properties",
        "required",
        "items",
        "anyOf",
        "oneOf",
        "allOf",
        "$ref",
        "$defs",
        "enum",
        "const",
        "additionalProperties",
        "nullable",
        "minimum",
        "exclusiveMinimum",
        "description",
        "default",
        "x",
    ]
)
ANY = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.text(max_size=5),
        st.sampled_from(["object", "array", "string", "null", "#/$defs/a", "#"]),
    ),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(KEYS, inner, max_size=4)),
    max_leaves=20,
)


def _all(schema: Any) -> None:
    for target in TARGETS:
        done = convert(schema, profile(target))
        done.shape.restore(done.shape.forward({"a": 1}))
        rejects(target, schema)
    list(changes(schema, {"type": "object"}))


@settings(max_examples=examples(300), deadline=None)
@given(schema=ANY)
def test_arbitrary_json_never_raises(schema: Any) -> None:
    _all(schema)


@pytest.mark.parametrize("key", ["properties", "items", "anyOf", "allOf"])
def test_a_schema_nested_thousands_deep_never_raises(key: str) -> None:
    schema: Any = {"type": "string"}
    for _ in range(5000):
        if key == "properties":
            schema = {"type": "object", "properties": {"a": schema}}
        elif key == "items":
            schema = {"type": "array", "items": schema}
        else:
            schema = {key: [schema, {"type": "null"}]}
    _all({"type": "object", "properties": {"deep": schema}})


def test_a_ref_to_itself_ends() -> None:
    _all(
        {
            "type": "object",
            "properties": {"a": {"$ref": "#"}},
            "$defs": {"a": {"$ref": "#/$defs/a"}},
        }
    )


def test_arguments_too_deep_for_json_text_cross_unchanged() -> None:
    done = convert({"type": "object", "properties": {"v": {}}}, profile("gemini"))
    deep: Any = []
    for _ in range(100_000):
        deep = [deep]
    assert done.shape.forward({"v": deep})["v"] is deep
    text = "[" * 100_000 + "]" * 100_000
    assert done.shape.restore({"v": text}) == {"v": text}
