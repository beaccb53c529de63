"""BR301: a canonical or target name that is not a tool of the pinned Claude Code version.

The pin, not a hand-kept list, says which canonical tools exist. When the name
exists in another pinned version, or is an alias the pin records (``KillShell``
for ``TaskStop``), the hint says so: that is usually drift, not a typo.
"""

from __future__ import annotations

from collections.abc import Iterator

from bridge_rules.diagnostics import Diagnostic, did_you_mean, error
from bridge_rules.lint.entries import written_entries
from bridge_rules.lint.registry import LintContext, check
from bridge_rules.pins import Pin
from bridge_rules.source import Span

_CHECKED_KINDS = frozenset({"canonical", "aliases", "capitalize"})


def _hint(ctx: LintContext, pin: Pin, name: str) -> str | None:
    hints = []
    for canonical, aliases in pin.aliases.items():
        if name in aliases and pin.has_tool(canonical):
            hints.append(f"'{name}' is an alias of '{canonical}' in {pin.spec}; use '{canonical}'")
    having = ctx.pins_having(name)
    if having:
        hints.append("present in " + ", ".join(p.version for p in having))
    near = did_you_mean(name, pin.tools)
    if near is not None and not hints:
        hints.append(near)
    return "; ".join(hints) or None


def _targets(ctx: LintContext) -> Iterator[tuple[str, Span, str]]:
    """(name, where, what) for every name the rules claim is a Claude Code tool."""
    for entry in written_entries(ctx.rules, kinds=_CHECKED_KINDS):
        if entry.stage.kind == "canonical":
            yield entry.key, entry.span, f"canonical name '{entry.key}'"
        elif not entry.wire.startswith("mcp__"):
            yield entry.wire, entry.span, f"target '{entry.wire}' of '{entry.key}'"
    for binding in ctx.rules.bindings.values():
        wire = binding.binding.wire
        if not wire.startswith("mcp__"):
            yield wire, binding.span, f"binding wire '{wire}' of '{binding.binding.local}'"


@check("pin-names", codes=("BR301",))
def unknown_tools(ctx: LintContext) -> Iterator[Diagnostic]:
    """Canonical names, non-MCP alias targets and binding wires must be tools of the pin."""
    pin = ctx.pin
    if pin is None or pin.product != "claude-code":
        return
    for name, span, what in _targets(ctx):
        if pin.has_tool(name):
            continue
        yield error(
            "BR301", f"{what} is not a tool of {pin.spec}", span, hint=_hint(ctx, pin, name)
        )
