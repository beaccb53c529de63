"""One tool call translated between local and wire shape.

The seam between name resolution and argument bindings: the payload and
stream rewriters call only these functions for a single call, so argument
adaptation lives in one place. A binding's operations apply only when the
binding actually decides the tool's wire name (an earlier stage may win), so
the arguments always match the schema the model was shown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bridge_rules.bindings.schema import advertised_schema

if TYPE_CHECKING:
    from bridge_rules.bindings.adapter import Adapter
    from bridge_rules.engine import Engine


@dataclass(frozen=True)
class ToolCall:
    """A tool name and its arguments (any JSON value; objects in practice)."""

    name: str
    arguments: Any


def adapter_for(engine: Engine, local: str) -> Adapter | None:
    """The binding adapter of ``local`` when that binding is what names it on the wire."""
    adapter = engine.rules.adapters.get(local)
    if adapter is None or engine.outbound_name(local) != adapter.wire:
        return None
    return adapter


Converter = Callable[[Any], Any]
_PLAN_CACHE_LIMIT = 65536


def history_plan(engine: Engine, local: str) -> tuple[str, Converter | None]:
    """How a local call is replayed: its wire name and its argument converter (None: as is).

    Resolved once per name and cached on the engine, so replaying a long history
    costs one dict lookup per call plus the compiled operations themselves.
    """
    cache = engine.history_plans
    plan = cache.get(local)
    if plan is None:
        adapter = adapter_for(engine, local)
        convert = adapter.to_wire if adapter is not None and adapter.history else None
        plan = (engine.outbound_name(local), convert)
        if len(cache) < _PLAN_CACHE_LIMIT:
            cache[local] = plan
    return plan


def outbound_call(engine: Engine, name: str, arguments: Any) -> ToolCall:
    """Local call -> wire call (history replay)."""
    wire, convert = history_plan(engine, name)
    return ToolCall(wire, convert(arguments) if convert is not None else arguments)


def inbound_call(
    engine: Engine, name: str, arguments: Any, registered: Iterable[str] | None = None
) -> ToolCall:
    """Wire call from the model -> local call (names back, arguments adapted and repaired)."""
    mapped = engine.inbound_name(name, registered)
    local = mapped if mapped is not None else name
    adapter = adapter_for(engine, local) if mapped is not None else None
    if adapter is not None:
        arguments = adapter.to_local(arguments)
    return ToolCall(local, engine.rules.repairs.repair(local, arguments))


def wire_schema(engine: Engine, local_name: str, local_schema: Any) -> Any:
    """The ``input_schema`` a local tool is advertised with on the wire."""
    adapter = adapter_for(engine, local_name)
    if adapter is None:
        return local_schema
    return advertised_schema(adapter, local_schema, engine.rules.pin, engine.rules.local_pin)


def adapts_arguments(
    engine: Engine, wire_name: str, registered: Iterable[str] | None = None
) -> bool:
    """Whether ``inbound_call`` may change the arguments of calls to ``wire_name``.

    Stream rewriting holds a tool block's argument deltas only when this is true.
    """
    mapped = engine.inbound_name(wire_name, registered)
    local = mapped if mapped is not None else wire_name
    if mapped is not None:
        adapter = adapter_for(engine, local)
        if adapter is not None and adapter.steps:
            return True
    return engine.rules.repairs.has(local)
