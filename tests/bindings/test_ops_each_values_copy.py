"""The generic operations `each`, `values` and `copy`: forward, inverse, and never a crash."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError
from tests.budget import examples

from bridge_rules.bindings.ops import Compiled, OpError, compile_op, deep_copy
from bridge_rules.model_bindings import Operation, op_kind

OP = TypeAdapter(Operation)


def compiled(raw: dict[str, Any]) -> Compiled:
    return compile_op(OP.validate_python(raw))


def forward(raw: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
    work = dict(args)
    compiled(raw).forward(work)
    return work


def inverse(raw: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
    fn = compiled(raw).inverse
    assert fn is not None
    work = dict(args)
    fn(work)
    return work


TODOS = {
    "each": {"in": "todos", "do": [{"drop": ["activeForm"]}, {"default": {"priority": "medium"}}]}
}
AGENTS = {"values": {"subagent_type": {"general-purpose": "general", "Explore": "explore"}}}

CASES: list[tuple[str, dict[str, Any], dict[str, Any], dict[str, Any]]] = [
    (
        "each: every object item, others kept",
        TODOS,
        {"todos": [{"content": "a", "status": "pending", "activeForm": "A"}, "x", 3]},
        {"todos": [{"content": "a", "status": "pending", "priority": "medium"}, "x", 3]},
    ),
    ("each: not a list", TODOS, {"todos": "[]"}, {"todos": "[]"}),
    ("each: absent", TODOS, {"other": 1}, {"other": 1}),
    (
        "each: nested each",
        {"each": {"in": "a", "do": [{"each": {"in": "b", "do": [{"rename": {"x": "y"}}]}}]}},
        {"a": [{"b": [{"x": 1}, {"z": 2}]}]},
        {"a": [{"b": [{"y": 1}, {"z": 2}]}]},
    ),
    ("values: mapped", AGENTS, {"subagent_type": "Explore"}, {"subagent_type": "explore"}),
    ("values: unknown kept", AGENTS, {"subagent_type": "Plan"}, {"subagent_type": "Plan"}),
    ("values: absent", AGENTS, {}, {}),
    (
        "values: type matters",
        {"values": {"n": {"1": "one"}}},
        {"n": 1},
        {"n": 1},
    ),
    ("values: objects untouched", AGENTS, {"subagent_type": {"x": 1}}, {"subagent_type": {"x": 1}}),
    (
        "copy: when absent",
        {"copy": {"content": "activeForm"}},
        {"content": "c"},
        {"content": "c", "activeForm": "c"},
    ),
    (
        "copy: target present wins",
        {"copy": {"content": "activeForm"}},
        {"content": "c", "activeForm": "Doing c"},
        {"content": "c", "activeForm": "Doing c"},
    ),
    ("copy: no source", {"copy": {"content": "activeForm"}}, {"x": 1}, {"x": 1}),
    ("copy: nested target", {"copy": {"a": "b.c"}}, {"a": [1]}, {"a": [1], "b": {"c": [1]}}),
]


@pytest.mark.parametrize(
    ("raw", "args", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_forward(raw: dict[str, Any], args: dict[str, Any], expected: dict[str, Any]) -> None:
    before = deep_copy(args)
    assert forward(raw, args) == expected
    assert args == before  # the caller's arguments are never mutated


def test_values_inverts_a_one_to_one_table() -> None:
    assert inverse(AGENTS, {"subagent_type": "general"}) == {"subagent_type": "general-purpose"}
    assert inverse(AGENTS, {"subagent_type": "build"}) == {"subagent_type": "build"}


def test_values_many_to_one_has_no_inverse() -> None:
    op = compiled({"values": {"status": {"cancelled": "completed", "done": "completed"}}})
    assert op.inverse is None
    assert op.why_not is not None
    assert "map to one" in op.why_not


def test_each_inverts_its_operations_in_reverse_order() -> None:
    raw = {"each": {"in": "edits", "do": [{"rename": {"old_string": "oldText"}}]}}
    assert inverse(raw, {"edits": [{"oldText": "x"}]}) == {"edits": [{"old_string": "x"}]}
    assert compiled(raw).exact


def test_each_over_a_lossy_operation_says_why() -> None:
    op = compiled({"each": {"in": "t", "do": [{"prefer": {"a": "b"}}]}})
    assert op.inverse is None
    assert op.why_not is not None
    assert "prefer a over b" in op.why_not


def test_copy_and_default_inside_each_are_not_exact() -> None:
    assert not compiled(TODOS).exact
    assert not compiled({"copy": {"a": "b"}}).exact


def test_kinds_as_written() -> None:
    for raw in (TODOS, AGENTS, {"copy": {"a": "b"}}):
        assert op_kind(OP.validate_python(raw)) == next(iter(raw))


@pytest.mark.parametrize(
    "raw",
    [
        {"each": {"in": "$.todos[*]", "do": [{"drop": ["a"]}]}},
        {"copy": {"$.a[*].b": "c"}},
        {"values": {"a..b": {"x": "y"}}},
        {"each": {"in": "t", "do": [{"rename": {"a..b": "c"}}]}},
    ],
)
def test_bad_paths_are_rule_errors(raw: dict[str, Any]) -> None:
    with pytest.raises(OpError) as err:
        compiled(raw)
    assert err.value.code == "BR401"


@pytest.mark.parametrize(
    "raw",
    [
        {"each": {"in": "t", "do": []}},
        {"each": {"in": "t", "do": [{"renam": {"a": "b"}}]}},
        {"each": {"into": "t", "do": [{"drop": ["a"]}]}},
        {"values": {"a": {"x": ["list"]}}},
    ],
)
def test_bad_shapes_are_validation_errors(raw: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        OP.validate_python(raw)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=12,
)
FIELD = st.sampled_from(["todos", "content", "activeForm", "subagent_type", "a"])


@settings(max_examples=examples(150), deadline=None)
@given(
    st.dictionaries(FIELD, JSON | st.lists(st.dictionaries(FIELD, JSON, max_size=3)), max_size=4)
)
def test_never_raises_and_never_mutates(args: dict[str, Any]) -> None:
    before = deep_copy(args)
    for raw in (TODOS, AGENTS, {"copy": {"content": "activeForm"}}):
        op = compiled(raw)
        for fn in (op.forward, op.inverse):
            if fn is not None:
                fn(dict(args))
    assert args == before
