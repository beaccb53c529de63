"""The ``input_schema`` a bound tool is advertised with: passthrough, canonical or hybrid."""

from __future__ import annotations

from typing import Any

from bridge_rules.bindings.adapter import Adapter
from bridge_rules.pins import Pin


def _properties(schema: Any) -> dict[str, Any]:
    props = schema.get("properties") if isinstance(schema, dict) else None
    return props if isinstance(props, dict) else {}


def advertised_schema(
    adapter: Adapter, local_schema: Any, pin: Pin | None, local_pin: Pin | None
) -> Any:
    """passthrough: the local schema; canonical: the pinned wire schema; hybrid: the pinned
    wire fields plus the named local extras (taken from ``local_schema``, else the local pin).

    A wire tool missing from the pin falls back to the local schema (lint reports it).
    """
    strategy = adapter.binding.schema_
    if strategy == "passthrough":
        return local_schema
    wire = pin.schema(adapter.wire) if pin is not None else None
    if wire is None:
        return local_schema
    if strategy == "canonical" and adapter.binding.required is None:
        return wire
    out = dict(wire)
    if strategy == "hybrid":
        local_props = _properties(local_schema)
        fallback = _properties(local_pin.schema(adapter.local)) if local_pin is not None else {}
        props = dict(_properties(wire))
        for extra in adapter.binding.extras:
            spec = local_props.get(extra, fallback.get(extra))
            if spec is not None and extra not in props:
                props[extra] = spec
        out["properties"] = props
    if adapter.binding.required is not None:
        out["required"] = list(adapter.binding.required)
    return out
