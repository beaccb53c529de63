"""One tool call translated between local and wire shape, over a compiled Runtime.

The seam between name resolution and argument bindings: the payload and
stream rewriters call only these functions for a single call, so argument
adaptation lives in one place. A binding's operations apply only when the
binding actually decides the tool's wire name (an earlier stage may win);
the runtime's ``adapters`` hold exactly those, decided at load.

``shapes`` are the request's own schema conversions (``OutboundResult.shapes``, the
tools it sent, :mod:`bridge_rules.schemas`): a call crosses the conversion of the schema
its request sent, never one a worker remembers from another request.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bridge_rules.bindings.schema import advertised_schema
from bridge_rules.repair.rules import NOTE_KEY, PipelineNote
from bridge_rules.runtime import Runtime
from bridge_rules.schemas.book import Shapes, forward, restore
from bridge_rules.schemas.convert import Conversion

OUTPUT_NOTE = "output"
"""``ToolCall.notes`` key: the call's arguments its binding's ``output:`` operations read (its
result is reshaped on the next request; ``transform.results`` carries them in the id)."""


@dataclass(frozen=True)
class ToolCall:
    """A tool name and its arguments (any JSON value; objects in practice).

    ``notes``: what repair recorded for itself (never part of ``arguments``), e.g. the
    trailing pipeline it stripped, for the result of this call.
    """

    name: str
    arguments: Any
    notes: Mapping[str, Any] = field(default_factory=dict)


def outbound_call(rt: Runtime, name: str, arguments: Any, shapes: Shapes | None = None) -> ToolCall:
    """Local call -> wire call (history replay)."""
    wire, convert = rt.history_plan(name)
    arguments = convert(arguments) if convert is not None else arguments
    return ToolCall(wire, forward(shapes, name, arguments))


def inbound_call(
    rt: Runtime,
    name: str,
    arguments: Any,
    registered: Iterable[str] | None = None,
    shapes: Shapes | None = None,
) -> ToolCall:
    """Wire call from the model -> local call (names back, arguments adapted and repaired)."""
    mapped = rt.resolver.inbound(name, registered)
    local = mapped if mapped is not None else name
    arguments = restore(shapes, local, arguments)
    if mapped is not None:
        adapter = rt.adapters.get(local)
        if adapter is not None:
            arguments = adapter.to_local(arguments)
    repaired, notes = rt.repairs.repair_noted(local, arguments)
    note = notes.get(NOTE_KEY)
    if isinstance(note, PipelineNote) and rt.sealer is None:
        # Nothing could carry the stripped stages to the result (no seal key): the agent
        # runs the command as the model wrote it, which gives exactly its output.
        repaired, notes = {**repaired, note.field: note.original}, {}
    output = rt.outputs.get(local) if mapped is not None else None
    if output is not None:
        given = repaired if isinstance(repaired, dict) else {}
        notes = {**notes, OUTPUT_NOTE: {k: given[k] for k in output.reads if k in given}}
    return ToolCall(local, repaired, notes)


def wire_schema(rt: Runtime, local_name: str, local_schema: Any) -> Any:
    """The ``input_schema`` a local tool is advertised with on the wire: the binding's
    choice, then converted for ``schemas.target`` (:mod:`bridge_rules.schemas`)."""
    return wire_conversion(rt, local_name, local_schema)[1].schema


def wire_conversion(
    rt: Runtime, local_name: str, local_schema: Any
) -> tuple[bytes | None, Conversion]:
    """:func:`wire_schema` with how calls cross it (``.shape``) and the bound schema's bytes,
    which name that conversion (None for a schema with no JSON form)."""
    return rt.schema_book.keyed(bound_schema(rt, local_name, local_schema))


def bound_schema(rt: Runtime, local_name: str, local_schema: Any) -> Any:
    """The schema the tool's binding advertises, before any target conversion."""
    adapter = rt.adapters.get(local_name)
    if adapter is None:
        return local_schema
    return advertised_schema(adapter, local_schema, rt.rules.pin, rt.rules.local_pin)


def wire_description(rt: Runtime, local_name: str, local_description: Any) -> Any:
    """The ``description`` a local tool is advertised with on the wire (docs/bindings.md)."""
    described = rt.descriptions.get(local_name)
    return local_description if described is None else described.text(local_description)


def adapts_arguments(
    rt: Runtime,
    wire_name: str,
    registered: Iterable[str] | None = None,
    shapes: Shapes | None = None,
) -> bool:
    """Whether ``inbound_call`` may change the arguments of calls to ``wire_name``.

    Stream rewriting holds a tool block's argument deltas only when this is true.
    """
    mapped = rt.resolver.inbound(wire_name, registered)
    local = mapped if mapped is not None else wire_name
    if shapes and local in shapes:
        return True
    if mapped is not None:
        adapter = rt.adapters.get(local)
        if adapter is not None and adapter.steps:
            return True
    return rt.repairs.has(local)


def checked_name(value: object, what: str = "name") -> str:
    """``value``, checked to be a str at the API boundary (``what`` names it in the error)."""
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, not {type(value).__name__}")
    return value


def checked_names(registered: Iterable[str] | None) -> tuple[str, ...] | None:
    """``registered`` materialised once (it may be a one-shot iterator), and type-checked."""
    if registered is None:
        return None
    if isinstance(registered, (str, bytes)) or not isinstance(registered, Iterable):
        raise TypeError(
            "registered must be an iterable of tool names (e.g. a list) or None, "
            f"not {type(registered).__name__}"
        )
    names = tuple(registered)
    for item in names:
        checked_name(item, "each registered name")
    return names
