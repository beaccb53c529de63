"""Tool calls whose name maps to no registered tool: ``inbound.unmapped``.

Without a policy (``pass``, the default) such a call reaches the agent as it
came, and the agent reports "tool X not found" with nothing pointing at the
rules. ``warn`` passes it on, logs the name with the closest registered tools,
counts it (:data:`UNMAPPED`) and lists it on the caller's
:class:`~bridge_rules.transform.report.InboundReport`
(the proxy's ``x-bridge-rules-unmapped`` header). ``error`` also replaces the call
with a text block that says what happened, so the agent (and its user) can read
it instead of a call that cannot run.

A call is unmapped when the name the way back produced is not one of the
request's registered local names (every local name the rules know when
``registered`` is None). Tool names are logged; arguments and text never are.
"""

from __future__ import annotations

import difflib
import logging
import re
import threading
from collections import Counter
from collections.abc import Iterable
from typing import Any

from bridge_rules import mcpnames
from bridge_rules.runtime import Runtime
from bridge_rules.transform.report import Unmapped
from bridge_rules.transform.scope import CallScope

log = logging.getLogger("bridge_rules.inbound")

_MAX_NAMES = 1000


class UnmappedCounter:
    """Process-wide count of unmapped calls (total, and by name for the first 1000 names)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.total = 0
        self.by_name: Counter[str] = Counter()

    def add(self, name: str) -> None:
        with self._lock:
            self.total += 1
            if name in self.by_name or len(self.by_name) < _MAX_NAMES:
                self.by_name[name] += 1


UNMAPPED = UnmappedCounter()
DENIED = UnmappedCounter()
"""Calls to tools the policy denies, in answers (``policy.on_denied``)."""


class UnmappedPolicy:
    """``inbound.unmapped`` for one response: decides, logs, counts and reports."""

    def __init__(self, scope: CallScope) -> None:
        rt = self.rt = scope.rt
        self.mode = rt.rules.unmapped if scope.mapping else "pass"
        self.known = scope.known
        self.report = scope.report
        self.scope = scope
        self.wires = scope.wires
        self.policy = rt.policy if rt.policy.active else None
        self.refusal: str | None = None
        """Set once ``on_denied: error`` refuses the answer: what the agent is told."""

    @property
    def active(self) -> bool:
        return self.mode != "pass" or self.policy is not None

    def action(self, found: Unmapped) -> str | None:
        """What becomes of the call: ``text``, ``drop``, ``error``, or None (passed on)."""
        if found.rule is not None and self.policy is not None:
            return self.policy.on_denied
        return "text" if self.mode == "error" else None

    def denied(self, name: str) -> Unmapped | None:
        if self.policy is None:
            return None
        decision = self.scope.judge.decide_all(self.wires.get(name, ()), name)
        if decision.allowed:
            return None
        found = Unmapped(name, (), str(decision.rule))
        DENIED.add(name)
        if self.report is not None:
            self.report.denied.append(found)
        log.warning(
            "tool call %s is to a tool the policy denies (%s); on_denied: %s",
            repr(name),  # a name comes from the model: repr keeps a newline from forging lines
            found.rule,
            self.policy.on_denied,
        )
        if self.policy.on_denied == "error" and self.refusal is None:
            self.refusal = self.text(found)
            if self.report is not None:
                self.report.refusal = self.refusal
        return found

    def passes(self, name: str) -> bool:
        """A call under ``name`` goes on untouched and unreported: what :meth:`check` finds
        nothing for, without its logging and counting."""
        if (
            self.policy is not None
            and not self.scope.judge.decide_all(self.wires.get(name, ()), name).allowed
        ):
            return False
        return self.mode == "pass" or name in self.known

    def check(self, name: str) -> Unmapped | None:
        """The finding for a call the agent would get under ``name``, or None when it is fine."""
        found_denied = self.denied(name)
        if found_denied is not None:
            return found_denied
        if self.mode == "pass" or name in self.known:
            return None
        found = Unmapped(name, _closest(self.rt, name, self.known))
        UNMAPPED.add(name)
        if self.report is not None:
            self.report.unmapped.append(found)
        log.warning(
            "tool call %s maps to no registered tool (%s); closest: %s",
            repr(name),  # a name comes from the model: repr keeps a newline from forging lines
            "turned into a text block" if self.mode == "error" else "passed on",
            ", ".join(found.candidates) or "none",
        )
        return found

    def text(self, found: Unmapped) -> str:
        if found.rule is not None:
            return (
                f"[bridge-rules] The model called the tool '{found.name}', which the policy "
                f"denies ({found.rule}), so the call was not passed on."
            )
        closest = ", ".join(f"'{c}'" for c in found.candidates) or "none"
        return (
            f"[bridge-rules] The model called a tool named '{found.name}', which the rules map "
            f"to no tool this agent registered, so the call was not passed on. Closest "
            f"registered tools: {closest}. Check the rules' `names`/`inbound` sections "
            "(bridge-rules explain)."
        )

    def message(self, message: dict[str, Any]) -> None:
        """Apply the policy to a message (a private copy) in place."""
        content = message.get("content")
        if not self.active or not isinstance(content, list):
            return
        out: list[Any] = []
        changed = False
        for block in content:
            name = block.get("name") if isinstance(block, dict) else None
            found = None
            if isinstance(name, str) and block.get("type") == "tool_use":
                found = self.check(name)
            action = None if found is None else self.action(found)
            if action is None:
                out.append(block)
                continue
            changed = True
            if action == "text":
                out.append({"type": "text", "text": self.text(found)})  # type: ignore[arg-type]
        if self.refusal is not None:
            message.clear()
            message.update(refusal_body(self.refusal))
            return
        if not changed:
            return
        message["content"] = out
        if message.get("stop_reason") == "tool_use" and not _has_calls(out):
            message["stop_reason"] = "end_turn"


def refusal_body(text: str) -> dict[str, Any]:
    """The Anthropic error an answer refused by ``on_denied: error`` becomes (a 403 from the
    proxy; an ``error`` event in a stream)."""
    return {"type": "error", "error": {"type": "permission_error", "message": text}}


def _has_calls(blocks: Iterable[Any]) -> bool:
    return any(isinstance(b, dict) and b.get("type") == "tool_use" for b in blocks)


_LEADING = re.compile(r"[A-Za-z0-9]+_")
"""One leading segment a gateway may have added: ``word_`` (an MCP server's prefix is
read by :mod:`bridge_rules.mcpnames`)."""


def _probes(rt: Runtime, name: str) -> list[str]:
    """``name``, then what the rules' inbound strips leave of it (suffixes, prefixes,
    patterns), then the name without one leading segment: a ``proxy_Grep`` is compared as
    ``Grep`` too, so the hint points at ``grep`` and the strip that would map it."""
    probes = [name]
    for strip in rt.rules.strips:
        tail = name[len(name) - len(strip.suffix) :]
        folded = strip.case != "exact" and tail.lower() == strip.suffix.lower()
        if (tail == strip.suffix or folded) and len(name) > len(strip.suffix):
            probes.append(name[: -len(strip.suffix)])
    probes += [candidate for candidate, _what, _span in rt.rules.gateway.candidates(name)]
    mcp = mcpnames.first_split(name)
    leading = _LEADING.match(name)
    if mcp is not None:
        probes.append(mcp[1])
    elif leading is not None and leading.end() < len(name):
        probes.append(name[leading.end() :])
    return list(dict.fromkeys(probes))


def _closest(rt: Runtime, name: str, known: frozenset[str]) -> tuple[str, ...]:
    """Registered local names close to ``name`` (or to what a strip leaves of it), by local
    or wire spelling."""
    by_key: dict[str, str] = {}
    for local in sorted(known):
        by_key.setdefault(local.lower(), local)
        by_key.setdefault(rt.outbound_name(local).lower(), local)
    found: dict[str, None] = {}
    for probe in _probes(rt, name):
        for hit in difflib.get_close_matches(probe.lower(), list(by_key), n=6, cutoff=0.6):
            found.setdefault(by_key[hit], None)
    return tuple(found)[:3]
