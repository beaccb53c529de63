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
