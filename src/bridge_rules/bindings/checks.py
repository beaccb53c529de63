"""Adapter checks: binding fields against both pins, and the history direction.

Pure functions over an adapter and the two pins, so the lint check module is a
thin registration and tests can call them directly.
"""

from __future__ import annotations

from collections.abc import Iterator

from bridge_rules.bindings.adapter import Adapter
from bridge_rules.bindings.ops import loses
from bridge_rules.diagnostics import Diagnostic, did_you_mean, error, warning
from bridge_rules.model_bindings import op_kind
from bridge_rules.pins import Pin


def _props(schema: object) -> set[str] | None:
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        return None
    return set(schema["properties"])


def _top(path: str) -> str | None:
    return None if path.startswith("$") else path.split(".", maxsplit=1)[0]


def field_problems(
    adapter: Adapter, pin: Pin | None, local_pin: Pin | None
) -> Iterator[Diagnostic]:
    """BR403 (wire tool missing from the pin), BR404 / BR405 (fields missing from a schema)."""
    binding = adapter.binding
    wire = _props(pin.schema(adapter.wire)) if pin is not None else None
    if pin is not None and wire is None and binding.schema_ != "passthrough":
        yield error(
            "BR403",
            f"binding '{adapter.local}' shows the model the {binding.schema_} schema of "
            f"'{adapter.wire}', which {pin.spec} does not have",
            adapter.span,
            hint="bind to a tool the pin has, or drop the binding so the tool keeps its own "
            "schema under its default wire name",
        )
        return
    local = _props(local_pin.schema(adapter.local)) if local_pin is not None else None
    extras = set(binding.extras)
    seen_as = f"{adapter.wire} in {pin_spec(pin)}"
    if binding.schema_ == "passthrough":
        wire = local
        seen_as = f"the local schema of '{adapter.local}' (passthrough) in {pin_spec(local_pin)}"
    written: set[str] = set()
    for step in adapter.steps:
        for path in step.reads:
            top = _top(path)
            if top is None or top in written:
                continue
            known = (wire or set()) | extras | (local or set())
            if wire is not None and top not in known:
                yield error(
                    "BR404",
                    f"'{top}' in '{step.text}' is not a field of {seen_as}",
                    step.span,
                    hint=_closest(top, known),
                )
        for path in step.writes:
            top = _top(path)
            if top is None:
                continue
            written.add(top)
            if local is not None and top not in local | extras:
                yield error(
                    "BR405",
                    f"'{top}' in '{step.text}' is not a field of local '{adapter.local}' in "
                    f"{pin_spec(local_pin)}",
                    step.span,
                    hint=_closest(top, local | extras),
                )
    if local is not None:
        for extra in binding.extras:
            if extra not in local:
                yield error(
                    "BR405",
                    f"extra '{extra}' is not a field of local '{adapter.local}' in "
                    f"{pin_spec(local_pin)}",
                    adapter.span,
                    hint=_closest(extra, local),
                )


def _closest(field: str, known: set[str]) -> str:
    """A misspelt field's nearest known one, else the fields there are: either way the
    finding says what to write instead."""
    return did_you_mean(field, sorted(known)) or f"known fields: {', '.join(sorted(known))}"


def pin_spec(pin: Pin | None) -> str:
    return pin.spec if pin is not None else "(no pin)"


def history_problems(adapter: Adapter) -> Iterator[Diagnostic]:
    """BR406: ``history: auto`` over operations without an inverse; BR407: ``history: none``
    while the binding reshapes arguments (replayed history would not match the wire schema)."""
    for lossy in adapter.lossy:
        yield warning(
            "BR406",
            f"history for '{adapter.local}' is lossy: '{lossy.step.text}' cannot be inverted "
            f"({lossy.why})",
            lossy.step.span,
            hint="declare the local -> wire operations under 'history:'",
        )
    if adapter.history_mode == "none" and adapter.steps:
        yield warning(
            "BR407",
            f"binding '{adapter.local}' translates arguments but replays history unchanged "
            "('history: none')",
            adapter.span,
            hint="remove 'history: none' to derive the inverse, or declare 'history:'",
        )


def loss_problems(adapter: Adapter) -> Iterator[Diagnostic]:
    """BR408: a binding whose operations can lose what replay should give back, with no
    ``losses:`` saying what (the round-trip law's exceptions are declared, never implied)."""
    binding = adapter.binding
    if binding.losses or binding.history == "none":  # `none` is BR407's finding
        return
    ops = list(binding.input)
    for index, op in enumerate(ops):
        if not loses(op):
            continue
        step = adapter.steps[index] if len(adapter.steps) == len(ops) else None
        what = f"'{step.text}'" if step is not None else f"its {op_kind(op)} operation"
        yield warning(
            "BR408",
            f"binding '{adapter.local}' cannot always replay a call as it was sent ({what}) "
            "and declares no 'losses:'",
            step.span if step is not None else adapter.span,
            hint="name the fields replay may not give back under 'losses:' (docs/bindings.md, "
            "Round trip)",
        )
        return
