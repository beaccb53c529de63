"""Compiled name stages: precomputed lookups with the provenance of every entry.

Each stage answers one question for an outbound (local) name: does it decide
the wire name, and if not, why not. ``match`` is the hot path (dict lookups,
one precompiled regex at most); ``why_not`` runs only when tracing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bridge_rules.model import Case, ReverseScope
from bridge_rules.patterns import Pattern
from bridge_rules.source import Span


@dataclass(frozen=True)
class Strip:
    """An inbound suffix strip (``inbound.strip_suffixes``) with where it was written."""

    suffix: str
    case: Case
    span: Span


@dataclass(frozen=True)
class Hit:
    """A stage decided: ``wire`` is the outgoing name, ``rule`` says which entry, quoted.

    ``rule`` follows the stage's kind in messages ("bindings 'read: Read'", "prefix
    'mcp__pi__'"), so it names a matcher only where a stage has several ("prefix 'mcp__'" or
    "pattern '...'" in a passthrough stage).
    """

    wire: str
    rule: str
    span: Span


@dataclass
class CompiledStage:
    index: int
    id: str
    kind: str
    span: Span
    case: Case = "exact"
    reverse: ReverseScope = "registered"
    description: str | None = None

    def match(self, name: str) -> Hit | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def why_not(self, name: str) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def local_names(self) -> list[str]:
        """Local names this stage knows by name (for ``registered=None``)."""
        return []


@dataclass
class TableStage(CompiledStage):
    """``canonical``, ``aliases``, ``capitalize``, ``bindings`` and listed passthrough names."""

    entries: dict[str, tuple[str, Span]] = field(default_factory=dict)
    folded: dict[str, tuple[str, str, Span]] = field(default_factory=dict)
    inverse: dict[str, tuple[str, Span]] = field(default_factory=dict)
    keeps_name: bool = False  # passthrough: the name goes out as written
    declared_only: dict[str, str] = field(default_factory=dict)
    """canonical ``from_pin``: names the pin's type declarations alone list -> the pin,
    left out of ``entries`` (``include_declared`` off); only ``why_not`` reads it."""

    def build(self) -> TableStage:
        self.folded = {}
        for key, (wire, span) in self.entries.items():
            self.folded.setdefault(key.lower(), (key, wire, span))
        return self

    def match(self, name: str) -> Hit | None:
        entry = self.entries.get(name)
        key = name
        if entry is None and self.case == "insensitive":
            folded = self.folded.get(name.lower())
            if folded is not None:
                key, wire, span = folded
                entry = (wire, span)
        if entry is None:
            return None
        wire = name if self.keeps_name else entry[0]
        rule = f"'{key}'" if self.keeps_name or self.kind == "canonical" else f"'{key}: {entry[0]}'"
        return Hit(wire, rule, entry[1])

    def why_not(self, name: str) -> str:
        pin = self.declared_only.get(name)
        if pin is not None:
            return (
                f"'{name}' is only in {pin}'s type declarations: the binary never sends it, so it "
                "is not canonical (`include_declared: true` takes it)"
            )
        what = {"canonical": "canonical name", "bindings": "binding"}.get(self.kind, "entry")
        if self.case == "exact":
            near = self.folded.get(name.lower())
            if near is not None:
                return f"no {what} '{name}' (exact case; '{near[0]}' differs only in case)"
            return f"no {what} '{name}' (exact case)"
        return f"no {what} '{name}' (case-insensitive)"

    def local_names(self) -> list[str]:
        return [] if self.kind == "canonical" else list(self.entries)


@dataclass
class PatternStage(CompiledStage):
    """``passthrough`` by prefix or regex; may also carry a names table."""

    prefix: str | None = None
    pattern: Pattern | None = None
    table: TableStage | None = None

    def match(self, name: str) -> Hit | None:
        if self.table is not None:
            hit = self.table.match(name)
            if hit is not None:
                return hit
        if self.prefix is not None:
            probe = name if self.case == "exact" else name.lower()
            wanted = self.prefix if self.case == "exact" else self.prefix.lower()
            if probe.startswith(wanted):
                return Hit(name, f"prefix {self.prefix!r}", self.span)
        if self.pattern is not None and self.pattern.match(name):
            return Hit(name, f"pattern {self.pattern.pattern!r}", self.span)
        return None

    def why_not(self, name: str) -> str:
        reasons = []
        if self.table is not None:
            reasons.append(self.table.why_not(name))
        if self.prefix is not None:
            case = "case-sensitive" if self.case == "exact" else "case-insensitive"
            reasons.append(f"does not start with {self.prefix!r} ({case})")
        if self.pattern is not None:
            reasons.append(f"does not match {self.pattern.pattern!r}")
        return "; ".join(reasons)

    def local_names(self) -> list[str]:
        return self.table.local_names() if self.table is not None else []


@dataclass
class PrefixStage(CompiledStage):
    """The catch-all default: ``value + name``."""

    value: str = ""
    inverse_for: str = "resolved"

    def match(self, name: str) -> Hit | None:
        return Hit(self.value + name, repr(self.value), self.span)

    def why_not(self, name: str) -> str:  # pragma: no cover - always matches
        return "always matches"

    def strip(self, wire: str) -> str | None:
        """Inverse for ``reverse: always``: the name with the prefix removed."""
        if self.case == "exact":
            return wire[len(self.value) :] if wire.startswith(self.value) else None
        if wire.lower().startswith(self.value.lower()):
            return wire[len(self.value) :]
        return None


@dataclass(frozen=True)
class NameGuard:
    """``wire_names``: the API's name rule at run time (limit, invalid names, collisions)."""

    max_length: int = 64
    on_invalid: str = "error"
    on_collision: str = "error"
    span: Span | None = None
    target: str | None = None
    """The rules' schema target (``schemas.target``), whose own name rule a name must also
    meet (Gemini's letter first); None or ``anthropic``: the API's rule alone."""


@dataclass(frozen=True)
class PrefixStrip:
    """An inbound prefix strip (``inbound.strip_prefixes``) with where it was written.

    A ``pattern`` strip (``prefix`` is then empty) removes what the pattern matches at the
    start of the name, such as ``mcp__[^_]+__`` for any one MCP server's prefix."""

    prefix: str
    case: Case
    span: Span
    pattern: Pattern | None = None

    @property
    def shown(self) -> str:
        """How messages name it: the prefix, or the pattern."""
        return self.prefix if self.pattern is None else self.pattern.pattern

    def strip(self, wire: str) -> str | None:
        if self.pattern is not None:
            found = self.pattern.match(wire)
            end = found.end() if found else 0
            return wire[end:] if 0 < end < len(wire) else None
        if len(wire) <= len(self.prefix):
            return None
        if self.case == "exact":
            hit = wire.startswith(self.prefix)
        else:
            hit = wire[: len(self.prefix)].lower() == self.prefix.lower()
        return wire[len(self.prefix) :] if hit else None


@dataclass(frozen=True)
class Gateway:
    """What a gateway does to names, undone when a returned name does not map by itself.

    ``candidates`` are tried in order (each looked up again, so strips compose:
    ``proxy_proxy_x`` -> ``proxy_x`` -> ``x``); ``match_registered`` runs last.
    """

    prefixes: tuple[PrefixStrip, ...] = ()
    doubled: tuple[tuple[str, Span], ...] = ()
    """Prefixes collapsed when written twice (``collapse_doubled_prefixes``)."""
    match_registered: str = "none"
    span: Span | None = None

    @property
    def active(self) -> bool:
        return bool(self.prefixes or self.doubled or self.match_registered != "none")

    def candidates(self, wire: str) -> list[tuple[str, str, Span | None]]:
        """(shorter name, what was done, where the rule is) for every strip that applies."""
        out: list[tuple[str, str, Span | None]] = []
        for prefix, span in self.doubled:
            if prefix and wire.startswith(prefix + prefix):
                out.append((wire[len(prefix) :], f"collapsed doubled prefix {prefix!r}", span))
        for strip in self.prefixes:
            rest = strip.strip(wire)
            if rest is not None:
                what = (
                    f"stripped prefix {strip.prefix!r} ({strip.case} case)"
                    if strip.pattern is None
                    else f"stripped pattern {strip.shown!r}"
                )
                out.append((rest, what, strip.span))
        return out

    def examples(self, wire: str, local: str) -> list[str]:
        """Mangled forms of ``wire`` these rules undo, for ``explain`` to trace."""
        out = [strip.prefix + wire for strip in self.prefixes if strip.pattern is None]
        out += [prefix + wire for prefix, _span in self.doubled if wire.startswith(prefix)]
        if self.match_registered != "none":
            out.append(local)
        if self.match_registered == "insensitive":
            out.append(local.upper())
        return out

    def registered(self, wire: str, names: tuple[str, ...]) -> str | None:
        """The one registered name ``wire`` matches under ``match_registered``, or None."""
        if self.match_registered == "none":
            return None
        if wire in names:
            return wire
        if self.match_registered != "insensitive":
            return None
        low = wire.lower()
        hits = [n for n in names if n.lower() == low]
        return hits[0] if len(hits) == 1 else None
