"""Property: a valid call crosses a conversion and comes back unchanged.

For every target, over generated schemas and over the corpus of real ones: any
instance valid against the agent's schema, carried forward, is valid against the
converted schema, and restoring it gives the instance back. The one documented
exception (docs/schemas.md): under ``require-all`` an explicit ``null`` in an
optional field that also accepts ``null`` comes back as an absent field, since the
wire cannot tell the two apart; ``_same`` compares with that in mind. And an object
that OpenAI strict closes no longer takes keys it does not declare, so for that
target the instances are drawn from the schema with those objects closed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from tests.budget import examples
from tests.schemas.checker import problems
from tests.schemas.instances import as_json_schema, declared_only, instances, schemas

from bridge_rules.schemas import TARGETS, convert, profile

CORPUS = json.loads((Path(__file__).parent / "corpus.json").read_text(encoding="utf-8"))["schemas"]


def _valid(schema: Any, value: Any) -> bool:
    return jsonschema.Draft202012Validator(schema).is_valid(value)


def _same(original: Any, back: Any, schema: Any) -> bool:
    """Equal, except an optional field's explicit null may come back absent."""
    if isinstance(original, dict) and isinstance(back, dict) and isinstance(schema, dict):
        props = schema.get("properties") or {}
        required = set(schema.get("required", []))
        for key in original.keys() | back.keys():
            if key not in back and original.get(key) is None and key not in required:
                continue
            if key not in original or key not in back:
                return False
            if not _same(original[key], back[key], props.get(key, {})):
                return False
        return True
    if isinstance(original, list) and isinstance(back, list) and isinstance(schema, dict):
        items = schema.get("items", {})
        return len(original) == len(back) and all(
            _same(a, b, items) for a, b in zip(original, back, strict=True)
        )
    return bool(original == back)


def _check(target: str, schema: dict[str, Any], value: Any) -> None:
    if target == "openai-strict":
        assume(_valid(declared_only(schema), value))
    _cross(target, schema, value)


def _cross(target: str, schema: dict[str, Any], value: Any) -> None:
    done = convert(schema, profile(target))
    assert problems(target, done.schema) == []
    wire = done.shape.forward(value)
    assert _valid(as_json_schema(done.schema), wire), (done.schema, wire)
    assert _same(value, done.shape.restore(wire), schema)


@settings(max_examples=examples(200), deadline=None, suppress_health_check=list(HealthCheck))
@given(target=st.sampled_from(TARGETS), data=st.data(), schema=schemas())
def test_generated_schemas_round_trip(
    target: str, data: st.DataObject, schema: dict[str, Any]
) -> None:
    value = data.draw(instances(schema, schema))
    assume(_valid(schema, value))
    _check(target, schema, value)


@pytest.mark.parametrize("entry", CORPUS, ids=lambda e: f"{e['source'].split(' ')[1]}:{e['tool']}")
@settings(max_examples=examples(20), deadline=None, suppress_health_check=list(HealthCheck))
@given(target=st.sampled_from(TARGETS), data=st.data())
def test_corpus_round_trips(entry: dict[str, Any], target: str, data: st.DataObject) -> None:
    schema = entry["schema"]
    value = data.draw(instances(schema, schema))
    assume(_valid(schema, value))
    _check(target, schema, value)


# Nodes that are arrays only through their union's branches or their values (deep profile,
# seed-independent: a gemini root union whose variants type one property's items apart was
# sent with items of JSON text beside the union, which ``[[]]`` and ``[1]`` both failed).
ARRAYS_TYPED_ELSEWHERE = [
    (
        {
            "oneOf": [
                {"type": "object", "additionalProperties": False, "required": ["op", "_"],
                 "properties": {"op": {"const": "op0"},
                                "_": {"type": "array", "items": {"type": "array"}}}},
                {"type": "object", "additionalProperties": False, "required": ["op"],
                 "properties": {"op": {"const": "op1"},
                                "_": {"type": "array", "items": {"type": "string"}}}},
            ]
        },
        [{"op": "op0", "_": [[]]}, {"op": "op1", "_": ["1", "true", "x"]}],
    ),
    (
        {"type": "object", "required": ["v"], "properties": {"v": {"anyOf": [
            {"type": "array", "items": {"type": "integer"}},
            {"type": "array", "items": {"type": "string"}},
        ]}}},
        [{"v": [1, 2]}, {"v": ["1", "true", "x"]}, {"v": []}],
    ),
    (  # a list goes to the branch whose items it holds: here, the one sent as JSON text
        {"type": "object", "required": ["v"], "properties": {"v": {"anyOf": [
            {"type": "array", "items": {"type": "integer"}},
            {"type": "array", "items": {"type": "array"}},
        ]}}},
        [{"v": [[None]]}, {"v": [1]}, {"v": [[1, "a"], []]}],
    ),
    (
        {"type": "object", "required": ["v"], "properties": {"v": {"enum": [[1], [2, 3]]}}},
        [{"v": [1]}, {"v": [2, 3]}],
    ),
    (
        {"type": "object", "required": ["v"], "properties": {"v": {"const": ["1"]}}},
        [{"v": ["1"]}],
    ),
    (  # its own type says array: items of JSON text, which every target then accepts
        {"type": "object", "required": ["v"], "properties": {"v": {"type": ["array", "null"]}}},
        [{"v": None}, {"v": [1, "a", [None]]}],
    ),
]  # fmt: skip


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(("schema", "values"), ARRAYS_TYPED_ELSEWHERE)
def test_arrays_typed_by_their_branches_or_values_cross_unchanged(
    target: str, schema: dict[str, Any], values: list[Any]
) -> None:
    _all_cross(target, schema, values)


def _all_cross(target: str, schema: dict[str, Any], values: list[Any]) -> None:
    """Each of ``values`` (valid, closed where openai-strict closes) crosses both ways."""
    done = convert(schema, profile(target))
    for value in values:
        assert _valid(schema, value)
        assert _valid(declared_only(schema), value)
        _cross(target, schema, value)
        assert done.shape.restore(value) == value  # the model wrote it as the agent's schema says


# A union of constraints on a node's own type: its branches take the node's type, and
# were sent as JSON text (an object with anyOf of required could then take no value).
CONSTRAINT_UNIONS = [
    (
        {"type": "object", "required": ["v"], "properties": {"v": {
            "type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "anyOf": [{"required": ["a"]}, {"required": ["b"]}]}}},
        [{"v": {"a": "x"}}, {"v": {"b": "y", "a": "x"}}],
    ),
    (
        {"type": "object", "properties": {"v": {
            "type": "string", "anyOf": [{"minLength": 3}, {"format": "date"}]}}},
        [{"v": "2020-01-01"}, {"v": "abc"}, {}],
    ),
]  # fmt: skip


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(("schema", "values"), CONSTRAINT_UNIONS)
def test_a_union_of_constraints_keeps_its_node_s_type(
    target: str, schema: dict[str, Any], values: list[Any]
) -> None:
    assert "JSON text" not in json.dumps(convert(schema, profile(target)).schema)
    _all_cross(target, schema, values)
