"""History replay's fast converter gives what the plain chain of inverses gives (issue 36).

``history_converter`` leaves out the steps that do nothing, hands back a call that holds
none of the keys its steps need, and runs a lone top-level rename as one comprehension.
The oracle is :meth:`Adapter.to_wire`, which still runs every inverse step over a copy in
order: for bindings of every operation whose inverse declares ``needs`` (and of the shipped
rule sets), over generated arguments drawn from the keys those bindings touch, both must
serialise to the same bytes, key order included, and neither may change the arguments.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter
from tests.budget import examples

import bridge_rules
from bridge_rules import jsonio
from bridge_rules import model_bindings as mb
from bridge_rules.bindings.adapter import Adapter, compile_binding, history_converter
from bridge_rules.resources import profile_names
from bridge_rules.source import Span

OPS = TypeAdapter(list[mb.operation_union(list(mb.OP_MODELS.values()))])
AT = Span("rules/fast.yaml", 1, 1)
BINDINGS: list[list[dict[str, Any]]] = [
    [{"rename": {"file_path": "path"}}],
    [{"rename": {"a": "b", "c": "b2"}}],
    [{"rename": {"a": "c", "c": "a"}}],  # a swap
    [{"rename": {"x.y": "z"}}],  # a path: not the comprehension
    [{"scale": {"timeout": 0.001}}, {"drop": ["description"]}],
    [{"scale": {"timeout": 0.001, "limit": 10}}],
    [
        {"rename": {"file_path": "path"}},
        {"drop": {"replace_all": False}},
        {"wrap": {"into": "edits", "fields": {"old_string": "oldText", "new_string": "newText"}}},
    ],
    [{"drop": ["description"]}],  # only identities: nothing replays
    [{"default": {"mode": "fast"}}, {"rename": {"a": "b"}}],  # an inverse without needs
    [{"values": {"mode": {"fast": "quick"}}}, {"rename": {"a": "b"}}],
]
KEYS = [
    "a", "b", "b2", "c", "x", "z", "path", "file_path", "timeout", "limit", "description",
    "replace_all", "edits", "oldText", "newText", "old_string", "new_string", "mode", "other",
]  # fmt: skip
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["fast", "quick", "x", ""]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(KEYS), inner, max_size=3),
    ),
    max_leaves=6,
)
ARGUMENTS = st.one_of(
    st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=6),
    st.lists(st.fixed_dictionaries({"oldText": st.text(max_size=3), "newText": SCALARS})).map(
        lambda edits: {"path": "a.py", "edits": edits}
    ),
    VALUES,
)
FAST = settings(max_examples=examples(300), deadline=None, suppress_health_check=list(HealthCheck))


def _adapter(raw: list[dict[str, Any]]) -> Adapter:
    binding = mb.Binding.model_construct(local="t", wire="T", input=OPS.validate_python(raw))
    adapter, diags = compile_binding(binding, AT, lambda path: AT)
    assert diags == []
    return adapter


def _shipped() -> list[Adapter]:
    found: dict[int, Adapter] = {}
    for name in profile_names():
        for adapter in bridge_rules.load(name).runtime.rules.adapters.values():
            found.setdefault(id(adapter.binding), adapter)
    return list(found.values())


ADAPTERS = [_adapter(raw) for raw in BINDINGS] + _shipped()


def _same_replay(adapter: Adapter, arguments: Any) -> None:
    before = copy.deepcopy(arguments)
    want = adapter.to_wire(arguments)
    convert = history_converter(adapter)
    got = arguments if convert is None else convert(arguments)
    assert jsonio.dumps(got) == jsonio.dumps(want)
    assert got == want
    assert jsonio.dumps(arguments) == jsonio.dumps(before)  # the caller's arguments untouched


@pytest.mark.parametrize("index", range(len(ADAPTERS)))
@FAST
@given(arguments=ARGUMENTS)
def test_the_fast_converter_replays_as_every_inverse_does(index: int, arguments: Any) -> None:
    _same_replay(ADAPTERS[index], arguments)


class Subclass(dict[str, Any]):
    pass


@pytest.mark.parametrize("index", range(len(BINDINGS)))
def test_a_dict_subclass_comes_out_a_plain_dict_with_the_same_items(index: int) -> None:
    arguments = Subclass(file_path="a.py", a=1, timeout=5000)
    _same_replay(ADAPTERS[index], arguments)


def test_the_shortcuts_are_taken_where_they_apply() -> None:
    """Not an oracle: that the cases above exercise the fast shapes at all."""
    rename, _, swap, nested, scale, _, edit, identities, *_ = ADAPTERS
    assert history_converter(identities) is None
    assert "_renamed" in repr(history_converter(rename))
    assert "_renamed" in repr(history_converter(swap))
    assert "_guarded" in repr(history_converter(scale))
    assert "_guarded" in repr(history_converter(edit))
    assert "run_steps" in repr(history_converter(nested))
    untouched = {"command": "ls"}
    converter = history_converter(scale)
    assert converter is not None
    assert converter(untouched) is untouched
