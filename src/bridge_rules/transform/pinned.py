"""The schema conversions of a local pin's tools: how their calls come back without the
request they answer (``bridge-rules transform inbound`` with the rules' ``local_pin``).

A proxy knows each request's own tools; a response rewritten on its own does not. The
local pin declares the agent's tools, so converting each pinned schema as a request would
gives the same shapes the request's own tools would, for an agent that sends what its pin
says.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bridge_rules.calls import wire_conversion
from bridge_rules.runtime import Runtime
from bridge_rules.schemas.shape import Shape


def pinned_shapes(rt: Runtime, tools: Mapping[str, Any]) -> dict[str, Shape]:
    """Local tool name -> how its calls cross its converted schema (tools that need
    nothing left out)."""
    out: dict[str, Shape] = {}
    for name, schema in tools.items():
        shape = wire_conversion(rt, name, schema)[1].shape
        if not shape.identity:
            out[name] = shape
    return out
