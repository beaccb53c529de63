"""One tool call translated between local and wire shape.

The seam between name resolution and argument bindings: the payload and
stream rewriters call only these functions for a single call, so argument
adaptation lives in one place.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bridge_rules.engine import Engine


@dataclass(frozen=True)
class ToolCall:
    """A tool name and its arguments (any JSON value; objects in practice)."""

    name: str
    arguments: Any


def outbound_call(engine: Engine, name: str, arguments: Any) -> ToolCall:
    """Local call -> wire call (history replay)."""
    return ToolCall(engine.outbound_name(name), arguments)


def inbound_call(
    engine: Engine, name: str, arguments: Any, registered: Iterable[str] | None = None
) -> ToolCall:
    """Wire call from the model -> local call (names back, arguments adapted and repaired)."""
    local = engine.inbound_name(name, registered)
    return ToolCall(local if local is not None else name, arguments)


def wire_schema(engine: Engine, local_name: str, local_schema: Any) -> Any:
    """The ``input_schema`` a local tool is advertised with on the wire."""
    return local_schema


def adapts_arguments(
    engine: Engine, wire_name: str, registered: Iterable[str] | None = None
) -> bool:
    """Whether ``inbound_call`` may change the arguments of calls to ``wire_name``.

    Stream rewriting holds a tool block's argument deltas only when this is true.
    """
    return False
