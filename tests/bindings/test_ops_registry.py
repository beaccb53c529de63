"""An argument operation is declared once: its class (with its model) and one registry entry.

The toy operation below is added the way docs/bindings.md says to add one, and nothing
else is edited: validation, the compiler of bindings, history replay, ``explain`` and the
lint checks all take it from there.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from bridge_rules import model_bindings as mb
from bridge_rules.bindings.adapter import compile_binding
from bridge_rules.bindings.checks import field_problems, loss_problems
from bridge_rules.bindings.explain import binding_section
from bridge_rules.bindings.ops import base
from bridge_rules.bindings.ops.registry import OPERATIONS, REGISTRY
from bridge_rules.pins import Pin
from bridge_rules.source import Span


class NegateOp(mb.OpModel):
    """Flip boolean fields (a toy: its own inverse)."""

    negate: list[str]


class Negate(base.Operation[list[str]]):
    model = NegateOp

    @classmethod
    def compile(cls, spec: list[str], nested: base.CompileNested) -> base.Compiled:
        paths = [base.field_path(f, "negate field") for f in spec]

        def run(work: dict[str, Any]) -> None:
            for path in paths:
                value = path.get(work)
                if isinstance(value, bool):
                    path.set(work, not value)

        return base.Compiled(
            forward=run,
            inverse=run,
            exact=True,
            text="negate " + ", ".join(spec),
            reads=tuple(spec),
            writes=tuple(spec),
        )


class LossyNegate(Negate):
    loses = True


WITH_TOY = TypeAdapter(list[mb.operation_union([*mb.OP_MODELS.values(), NegateOp])])
AT = Span("rules/toy.yaml", 3, 5)


def toy_adapter(raw_ops: list[dict[str, Any]]) -> Any:
    """A binding holding the toy, validated by the union built the way ``Operation`` is."""
    ops = WITH_TOY.validate_python(raw_ops)
    binding = mb.Binding.model_construct(local="toggle", wire="Toggle", input=ops)
    adapter, diags = compile_binding(binding, AT, lambda path: Span(AT.file, 4 + int(path[1])))
    assert diags == []
    return adapter


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(REGISTRY, "negate", Negate)  # the one registry entry


def test_validation_accepts_the_toy_by_its_key_and_rejects_a_wrong_shape() -> None:
    ops = WITH_TOY.validate_python([{"negate": ["done"]}, {"rename": {"a": "b"}}])
    assert [mb.op_kind(op) for op in ops] == ["negate", "rename"]
    with pytest.raises(ValidationError):
        WITH_TOY.validate_python([{"negate": "done"}])
    schema = WITH_TOY.json_schema()
    assert "NegateOp" in schema["$defs"]
    assert schema["$defs"]["NegateOp"]["description"] == NegateOp.__doc__


@pytest.mark.usefixtures("registered")
def test_the_toy_compiles_applies_and_inverts_inside_a_binding() -> None:
    adapter = toy_adapter([{"negate": ["done"]}, {"rename": {"id": "taskId"}}])
    sent = {"id": 7, "done": True, "note": "x"}
    local = adapter.to_local(sent)
    assert local == {"taskId": 7, "done": False, "note": "x"}
    assert adapter.to_wire(local) == sent
    assert adapter.invertible
    assert adapter.exact
    assert [s.kind for s in adapter.history] == ["inverse rename", "inverse negate"]
    assert sent == {"id": 7, "done": True, "note": "x"}  # the caller's arguments untouched


@pytest.mark.usefixtures("registered")
def test_explain_prints_the_toy_with_where_it_is_written() -> None:
    adapter = toy_adapter([{"negate": ["done"]}])
    section = binding_section(adapter, (), {"done": True}, traced=True)
    assert "1. negate: negate done  [rules/toy.yaml:4:0]" in section["text"]
    assert section["operations"][0]["op"] == "negate"
    assert section["round_trip"]["exact"]


@pytest.mark.usefixtures("registered")
def test_lint_checks_the_fields_the_toy_reads_and_writes() -> None:
    adapter = toy_adapter([{"negate": ["done"]}])
    pin = Pin("wire", "1", {"Toggle": {"properties": {"id": {}}}})
    local_pin = Pin("local", "1", {"toggle": {"properties": {"id": {}}}})
    found = [(d.code, d.message) for d in field_problems(adapter, pin, local_pin)]
    assert found == [
        (
            "BR404",
            "'done' in 'negate done' is not a field of the local schema of 'toggle' "
            "(passthrough) in local@1",
        ),
        ("BR405", "'done' in 'negate done' is not a field of local 'toggle' in local@1"),
    ]


def test_lint_asks_for_losses_only_when_the_class_says_replay_can_lose(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(REGISTRY, "negate", Negate)
    assert list(loss_problems(toy_adapter([{"negate": ["done"]}]))) == []
    monkeypatch.setitem(REGISTRY, "negate", LossyNegate)
    (diag,) = loss_problems(toy_adapter([{"negate": ["done"]}]))
    assert diag.code == "BR408"
    assert "('negate done')" in diag.message


def test_the_registry_and_the_rule_format_list_the_same_operations_in_order() -> None:
    assert list(REGISTRY) == list(mb.OP_MODELS)
    assert [op.model for op in OPERATIONS] == list(mb.OP_MODELS.values())
    assert "negate" not in mb.OP_MODELS  # a subclass declared later does not join the format
