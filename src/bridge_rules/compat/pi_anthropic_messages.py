"""pi-anthropic-messages' exported API, answered by its packaged profile.

The seed exports ``CC_CANONICAL_NAMES``, ``PI_TO_CC_CANONICAL``, ``NATIVE_ALIASES``,
``FLAT_TO_MCP``, ``DEFAULT_MCP_PREFIX``, ``resolveOutboundName``, ``transformPayload``,
``buildReverseMap``, ``lookupReverse``, ``renameToolCallsInPlace`` and
``isClaudeAnthropicMessages``. Here each has a snake_case counterpart (the constants keep
their names), read from the ``pi-anthropic-messages`` profile's stages by id, so the
profile's YAML is the only table. Every function takes ``engine=`` to answer for other
rules (an overlay of the profile, say). docs/python-api.md lists them side by side.

With ``PI_ANTHROPIC_MESSAGES_DEBUG_LOG=/path`` set (the profile declares the variable as
``debug_log: {env: ...}``), :func:`transform_payload` appends the payload before and after
(as :meth:`Engine.outbound <bridge_rules.engine.Engine.outbound>` does for any caller) and
:func:`rename_tool_calls_in_place` each rename, through :mod:`bridge_rules.debuglog`
(owner-only file, prompt text omitted).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from bridge_rules.compat.tables import ReverseMap, lookup, reverse_map, stage
from bridge_rules.debuglog import DebugLog, name_map
from bridge_rules.engine import Engine, load

PROFILE = "pi-anthropic-messages"

# The seed's constant -> the profile stage that holds it.
STAGE_IDS = {
    "CC_CANONICAL_NAMES": "cc-canonical-names",
    "PI_TO_CC_CANONICAL": "pi-to-cc-canonical",
    "NATIVE_ALIASES": "native-aliases",
    "FLAT_TO_MCP": "flat-to-mcp",
    "DEFAULT_MCP_PREFIX": "default-mcp-prefix",
}

if TYPE_CHECKING:  # read from the profile on first use (``__getattr__`` below)
    CC_CANONICAL_NAMES: tuple[str, ...]
    PI_TO_CC_CANONICAL: dict[str, str]
    NATIVE_ALIASES: dict[str, str]
    FLAT_TO_MCP: dict[str, str]
    DEFAULT_MCP_PREFIX: str

__all__ = [
    "CC_CANONICAL_NAMES",
    "DEFAULT_MCP_PREFIX",
    "FLAT_TO_MCP",
    "NATIVE_ALIASES",
    "PI_TO_CC_CANONICAL",
    "PROFILE",
    "build_reverse_map",
    "debug_log",
    "engine",
    "is_anthropic_messages_gated",
    "is_claude_anthropic_messages",
    "lookup_reverse",
    "rename_tool_calls_in_place",
    "resolve_outbound_name",
    "transform_payload",
]


@functools.lru_cache(maxsize=1)
def engine() -> Engine:
    """The packaged profile, loaded once (milliseconds) on first use."""
    return load(PROFILE)


def _engine(given: Engine | None) -> Engine:
    return engine() if given is None else given


def constant(name: str, rules: Engine | None = None) -> Any:
    """One of the seed's constants, from ``rules`` (default: the packaged profile)."""
    found = stage(_engine(rules), STAGE_IDS[name])
    if name == "CC_CANONICAL_NAMES":
        return tuple(found.table)
    if name == "DEFAULT_MCP_PREFIX":
        return found.prefix
    return dict(found.table)


def __getattr__(name: str) -> Any:
    """``CC_CANONICAL_NAMES`` and the other constants, read from the profile on first use."""
    if name in STAGE_IDS:
        value = constant(name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def resolve_outbound_name(name: str, rules: Engine | None = None) -> str:
    """``resolveOutboundName``: the wire name a pi tool goes out under."""
    return _engine(rules).outbound_name(name)


def build_reverse_map(registered: Iterable[str], rules: Engine | None = None) -> ReverseMap:
    """``buildReverseMap``: wire name -> pi name for the registered tools (a ``Mapping``
    holding each entry under its exact and its lowercase key)."""
    return reverse_map(_engine(rules), registered)


def lookup_reverse(name: str, rmap: ReverseMap) -> str | None:
    """``lookupReverse``: the map as written, then lowercased, then with one ``_ide`` strip."""
    return lookup(name, rmap)


def is_anthropic_messages_gated(
    model: Mapping[str, Any] | None,
    env: Mapping[str, str] | None = None,
    rules: Engine | None = None,
) -> bool:
    """``isAnthropicMessagesGated`` (``isClaudeAnthropicMessages``, its deprecated alias, is
    this same function): ``model`` is pi's ``ctx.model`` (``{"api": ..., "id": ...}``) or
    None; ``env=None`` reads ``os.environ`` (the FORCE/DISABLE overrides)."""
    return _engine(rules).gate(model, env)


is_claude_anthropic_messages = is_anthropic_messages_gated
"""``isClaudeAnthropicMessages``: the seed's deprecated alias of the same function."""


def debug_log(rules: Engine | None = None, env: Mapping[str, str] | None = None) -> DebugLog | None:
    """The log ``PI_ANTHROPIC_MESSAGES_DEBUG_LOG`` names (as the profile declares), or None."""
    return _engine(rules).debug_log(env)


def transform_payload(
    payload: Any, rules: Engine | None = None, env: Mapping[str, str] | None = None
) -> tuple[Any, dict[str, str]]:
    """``transformPayload``: the rewritten request (a new object) and its ``nameMap`` (each
    renamed tool under its original and its lowercase name). The input is not changed."""
    result = _engine(rules).outbound(payload, env=env)  # which writes the debug log
    return result.payload, name_map(result.renames)


def rename_tool_calls_in_place(
    message: Any, rmap: ReverseMap, env: Mapping[str, str] | None = None
) -> bool:
    """``renameToolCallsInPlace``: pi's ``toolCall`` blocks (``{type: "toolCall", id, name,
    arguments}``) renamed back in place; True when one changed. Misses stay as they are."""
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return False
    log = debug_log(rmap.engine, env)
    changed = False
    for block in content:
        if not isinstance(block, dict) or block.get("type") != "toolCall":
            continue
        name = block.get("name")
        local = lookup(name, rmap) if isinstance(name, str) else None
        if local is not None and local != name:
            block["name"] = local
            changed = True
            if log is not None:
                log.write({"event": "inbound_rename", "from": name, "to": local})
    return changed
