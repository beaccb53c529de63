"""BR319: a local tool with a Claude Code tool's name that lacks that tool's required fields.

A model trained on Claude Code calls ``Read`` with ``file_path``. A local tool of that
very name whose schema has no ``file_path`` gets calls it cannot run, unless a binding
maps the arguments. BR315 covers a tool that goes out under a Claude Code name through an
alias when the rules name a Claude Code pin; this covers the name itself, with or without
one (the newest Claude Code pin on the search path stands in). Names in another case
(pi's and opencode's ``read``) are the agents' own tools, advertised with their own
schemas, and are not matched.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

from bridge_rules.diagnostics import Diagnostic, warning
from bridge_rules.lint.registry import LintContext, check
from bridge_rules.pins import Pin, PinError, available, load_pin

CLAUDE_CODE = "claude-code"


@functools.lru_cache(maxsize=1)
def _newest_claude_code() -> Pin | None:
    versions = available(CLAUDE_CODE)
    if not versions:
        return None
    try:
        return load_pin(f"{CLAUDE_CODE}@{versions[-1]}")
    except (PinError, ValueError, KeyError):
        return None


def _required(schema: Any) -> list[str]:
    if not isinstance(schema, dict) or not isinstance(schema.get("required"), list):
        return []
    return [r for r in schema["required"] if isinstance(r, str)]


def _fields(schema: Any) -> set[str]:
    props = schema.get("properties") if isinstance(schema, dict) else None
    return set(props) if isinstance(props, dict) else set()


@check("canonical-fields", codes=("BR319",))
def canonical_fields(ctx: LintContext) -> Iterator[Diagnostic]:
    """A local tool with a Claude Code tool's name must declare that tool's required fields."""
    pin = ctx.local_pin
    if pin is None:
        return
    canon = ctx.pin or _newest_claude_code()
    if canon is None:
        return
    file = next((f for f in reversed(ctx.files) if f.rules.local_pin is not None), None)
    if file is None:
        return
    where = ctx.span(file, ("local_pin",), value=True)
    for name, schema in pin.tools.items():
        if name in ctx.runtime.adapters:
            continue
        wire = ctx.runtime.outbound_name(name)
        if ctx.pin is not None and wire in ctx.pin.tools:
            continue  # goes out under a Claude Code name: BR315 says what differs
        if name not in canon.tools:
            continue
        claude = name
        missing = [f for f in _required(canon.tools[claude]) if f not in _fields(schema)]
        if missing:
            yield warning(
                "BR319",
                f"{pin.spec} tool '{name}' has the name of {canon.spec}'s tool but not "
                f"its required field{'s' if len(missing) > 1 else ''} "
                + ", ".join(missing)
                + f": a model calls it as Claude Code's '{claude}'",
                where,
                hint=f"bind '{name}' to '{claude}' with the argument operations that map them",
            )
