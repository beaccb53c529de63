"""The second pass's policy job: ``inbound.unmapped`` and the tool policy's ``on_denied``
over a stream's calls.

A refused call's start becomes an ``error`` event (``on_denied: error``), nothing
(``drop``) or an empty text block whose stop brings the explanation (``text``): the same
blocks a message answer gets.
"""

from __future__ import annotations

from typing import Any

from bridge_rules.transform.framing import Event, Piece
from bridge_rules.transform.report import Unmapped
from bridge_rules.transform.second_state import PassState
from bridge_rules.transform.unmapped import refusal_body


class PolicyPass(PassState):
    """Calls judged by the unmapped and tool policies as their blocks start."""

    def _refuse(self, refusal: str, out: list[Piece]) -> None:
        """``on_denied: error``: the refusal goes out and nothing after it."""
        self._refusing, self._identity = True, False
        out.append(self._made("error", refusal_body(refusal)))

    def _judged(
        self, block: Any, index: int, out: list[Piece]
    ) -> tuple[Unmapped | None, str | None, bool]:
        """A block's start as the policy sees it: what it found, the action, and whether
        the start was consumed (the answer refused, or the call dropped)."""
        if not (isinstance(block, dict) and block.get("type") == "tool_use"):
            return None, None, False
        name = block.get("name")
        found = self.policy.check(name) if isinstance(name, str) else None
        action = None if found is None else self.policy.action(found)
        if action == "error" and self.policy.refusal is not None:
            self._refuse(self.policy.refusal, out)
            return found, action, True
        if action == "drop":
            self._dropped.add(index)
            self._refused += 1
            self._identity = False  # later blocks move up: their events are renumbered
            return found, action, True
        return found, action, False

    def _as_text(self, index: int, at: int, found: Unmapped, out: list[Piece]) -> None:
        """``on_denied: text``: the call's start becomes an empty text block's."""
        self._errors[index] = found
        self._refused += 1
        empty = {"type": "text", "text": ""}
        start = {"type": "content_block_start", "index": at, "content_block": empty}
        out.append(self._made("content_block_start", start))

    def _unmapped(
        self, event: Event, data: dict[str, Any], index: int, found: Unmapped, out: list[Piece]
    ) -> None:
        """A call turned into text: its argument deltas go, its stop brings the explanation."""
        if data.get("type") != "content_block_stop":
            return
        del self._errors[index]
        at = self._index.get(index, index)
        delta = {"type": "text_delta", "text": self.policy.text(found)}
        explained = {"type": "content_block_delta", "index": at, "delta": delta}
        out.append(self._made("content_block_delta", explained))
        out.append(self._renumbered(event, data, at))
