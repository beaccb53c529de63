"""One tool call translated between local and wire shape, over a compiled Runtime.

The seam between name resolution and argument bindings: the payload and
stream rewriters call only these functions for a single call, so argument
adaptation lives in one place. A binding's operations apply only when the
binding actually decides the tool's wire name (an earlier stage may win);
the runtime's ``adapters`` hold exactly those, decided at load.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bridge_rules.bindings.schema import advertised_schema
from bridge_rules.repair.rules import NOTE_KEY, PipelineNote
from bridge_rules.runtime import Runtime


@dataclass(frozen=True)
class ToolCall:
    """A tool name and its arguments (any JSON value; objects in practice).

    ``notes``: what repair recorded for itself (never part of ``arguments``), e.g. the
    trailing pipeline it stripped, for the result of this call.
    """

    name: str
    arguments: Any
    notes: Mapping[str, Any] = field(default_factory=dict)


def outbound_call(rt: Runtime, name: str, arguments: Any) -> ToolCall:
    """Local call -> wire call (history replay)."""
    wire, convert = rt.history_plan(name)
    arguments = convert(arguments) if convert is not None else arguments
    return ToolCall(wire, rt.schema_book.forward(name, arguments))


def inbound_call(
    rt: Runtime, name: str, arguments: Any, registered: Iterable[str] | None = None
) -> ToolCall:
    """Wire call from the model -> local call (names back, arguments adapted and repaired)."""
    mapped = rt.resolver.inbound(name, registered)
    local = mapped if mapped is not None else name
    arguments = rt.schema_book.restore(local, arguments)
    if mapped is not None:
        adapter = rt.adapters.get(local)
        if adapter is not None:
            arguments = adapter.to_local(arguments)
    repaired, notes = rt.repairs.repair_noted(local, arguments)
    note = notes.get(NOTE_KEY)
    if isinstance(note, PipelineNote) and rt.sealer is None:
        # Nothing could carry the stripped stages to the result (no seal key): the agent
        # runs the command as the model wrote it, which gives exactly its output.
        return ToolCall(local, {**repaired, note.field: note.original})
    return ToolCall(local, repaired, notes)


def wire_schema(rt: Runtime, local_name: str, local_schema: Any) -> Any:
    """The ``input_schema`` a local tool is advertised with on the wire: the binding's
    choice, then converted for ``schemas.target`` (:mod:`bridge_rules.schemas`)."""
    return rt.schema_book.wire(local_name, bound_schema(rt, local_name, local_schema))


def bound_schema(rt: Runtime, local_name: str, local_schema: Any) -> Any:
    """The schema the tool's binding advertises, before any target conversion."""
    adapter = rt.adapters.get(local_name)
    if adapter is None:
        return local_schema
    return advertised_schema(adapter, local_schema, rt.rules.pin, rt.rules.local_pin)


def adapts_arguments(rt: Runtime, wire_name: str, registered: Iterable[str] | None = None) -> bool:
    """Whether ``inbound_call`` may change the arguments of calls to ``wire_name``.

    Stream rewriting holds a tool block's argument deltas only when this is true.
    """
    mapped = rt.resolver.inbound(wire_name, registered)
    local = mapped if mapped is not None else wire_name
    if local in rt.schema_book.shapes:
        return True
    if mapped is not None:
        adapter = rt.adapters.get(local)
        if adapter is not None and adapter.steps:
            return True
    return rt.repairs.has(local)
