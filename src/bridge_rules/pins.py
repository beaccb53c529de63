"""Pinned tool-input schemas: Claude Code versions and local agents (pi).

A pin is written ``<product>@<version>`` (``claude-code@2.1.330``,
``pi@0.73.1``) and read from ``schemas/<product>/<version>.json``.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from typing import Any

from bridge_rules.diagnostics import did_you_mean
from bridge_rules.resources import schemas_dir

_SPEC = re.compile(r"^(?P<product>[a-z][a-z0-9-]*)@(?P<version>[0-9][0-9A-Za-z.+-]*)$")


@dataclass(frozen=True)
class Pin:
    product: str
    version: str
    tools: dict[str, dict[str, Any]]
    aliases: dict[str, list[str]] = field(default_factory=dict)
    wildcards: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def spec(self) -> str:
        return f"{self.product}@{self.version}"

    def has_tool(self, name: str) -> bool:
        return name in self.tools

    def schema(self, name: str) -> dict[str, Any] | None:
        if name in self.tools:
            return self.tools[name]
        if name.startswith("mcp__"):
            return self.wildcards.get("mcp__*")
        return None


class PinError(ValueError):
    pass


def parse_spec(spec: str) -> tuple[str, str]:
    match = _SPEC.match(spec)
    if not match:
        raise PinError(
            f"'{spec}' is not a pin; write it as <product>@<version>, e.g. claude-code@2.1.330"
        )
    return match["product"], match["version"]


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else -1 for p in re.split(r"[.+-]", version))


def available(product: str) -> list[str]:
    """Versions pinned for a product, oldest first."""
    directory = schemas_dir() / product
    if not directory.is_dir():
        return []
    return sorted((p.stem for p in directory.glob("*.json")), key=_version_key)


@functools.cache
def load_pin(spec: str) -> Pin:
    """Load a pin; raises :class:`PinError` with the available versions on a miss."""
    product, version = parse_spec(spec)
    path = schemas_dir() / product / f"{version}.json"
    if not path.is_file():
        specs = [f"{product}@{v}" for v in available(product)]
        near = did_you_mean(spec, specs)
        hint = f"; {near}" if near else ""
        raise PinError(
            f"no pinned schemas for '{spec}' (available: {', '.join(specs) or 'none'}){hint}"
        )
    raw = json.loads(path.read_text(encoding="utf-8"))
    tools = raw.get("tools", {})
    if isinstance(tools, list):  # pi pins list tools with their parameters
        tools = {t["name"]: t.get("parameters", {}) for t in tools}
    elif product == "pi":
        tools = {name: t.get("parameters", t) for name, t in tools.items()}
    return Pin(
        product=product,
        version=version,
        tools=tools,
        aliases=raw.get("aliases", {}),
        wildcards=raw.get("wildcard_tools", {}),
    )
