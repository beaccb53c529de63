"""What rewriting one response found, for its caller: an :class:`InboundReport`.

Filled by every inbound pass of one response (names mapped back, calls to no registered
tool, calls the policy denies) and read afterwards: the proxy turns it into its access
line, metrics and the ``x-bridge-rules-unmapped`` header.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar

HEADER = "x-bridge-rules-unmapped"
_HEADER_UNSAFE = re.compile(r"[^A-Za-z0-9_.:/-]")
_MAX_HEADER = 1024


@dataclass(frozen=True)
class Unmapped:
    """A call's name that maps to no registered tool, and the closest registered ones; or,
    with ``rule``, a call to a tool the policy denies (``policy.on_denied``)."""

    name: str
    candidates: tuple[str, ...]
    rule: str | None = None
    """The policy rule that denies the tool (None: the call is only unmapped)."""


@dataclass
class InboundReport:
    """Filled while one response is rewritten; the caller reads it afterwards."""

    HEADER: ClassVar[str] = HEADER
    """The response header :meth:`header_value` goes under."""
    unmapped: list[Unmapped] = field(default_factory=list)
    renamed: dict[str, str] = field(default_factory=dict)
    """Names mapped back (wire -> local), first seen first."""
    renamed_calls: int = 0
    """Tool calls whose name was mapped back."""
    denied: list[Unmapped] = field(default_factory=list)
    """Calls to tools the policy denies, whatever ``on_denied`` did with them."""
    refusal: str | None = None
    """Set when ``on_denied: error`` refused the answer: what the agent is told."""

    def rename(self, wire: str, local: str) -> None:
        self.renamed.setdefault(wire, local)
        self.renamed_calls += 1

    def header_value(self) -> str | None:
        """``x-bridge-rules-unmapped``: the names, comma-separated and header-safe; None if none."""
        if not self.unmapped:
            return None
        names = dict.fromkeys(_HEADER_UNSAFE.sub("?", u.name) for u in self.unmapped)
        return ",".join(names)[:_MAX_HEADER]
