"""The state the second pass's jobs share, and the blocks it writes whole.

:class:`~bridge_rules.transform.second.SecondPass` is built in layers, one module per job
(:mod:`~bridge_rules.transform.second_policy`, :mod:`~bridge_rules.transform.second_recover`,
the coordinating :mod:`~bridge_rules.transform.second`); they all count and renumber the same
blocks, so the counters and the event writing live here once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bridge_rules.transform.framing import Event, Piece
from bridge_rules.transform.recover import TextScanner
from bridge_rules.transform.report import Unmapped
from bridge_rules.transform.scope import CallScope
from bridge_rules.transform.unmapped import UnmappedPolicy


@dataclass
class HeldText:
    """A text block under recovery: its held start event and the open output segment."""

    start: Event
    data: dict[str, Any]
    scanner: TextScanner
    out: int | None = None  # output index of the text segment being written
    emitted: bool = False  # any text or call came out of this block


class PassState:
    """The second pass's counters, index map and held blocks; the events it makes."""

    def __init__(self, scope: CallScope) -> None:
        self.scope = scope
        self.recover = scope.rt.plan.recover_tool_calls and scope.mapping
        self.policy = UnmappedPolicy(scope)
        self._errors: dict[int, Unmapped] = {}  # upstream index -> a call turned into text
        self._calls = 0  # tool_use blocks passed on
        self._refused = 0  # tool_use blocks turned into text or dropped (unmapped, denied)
        self._dropped: set[int] = set()  # upstream indexes of calls dropped (``on_denied: drop``)
        self._refusing = False  # ``on_denied: error`` refused the answer: nothing more goes out
        self._identity = not self.recover
        """Every block keeps its index so far: then an event that is neither a block's
        start nor a ``message_*`` one (a delta or a stop) of a block passed on as it came
        goes on unparsed (a mention of those words in a delta's text only sends it the
        slow way). ``_refusing`` clears it too."""
        self.message_id = ""
        self.recovered = 0  # calls recovered from text (their ids count them all)
        self._recovered_out = 0  # ... of which passed on as calls (the policy allows them)
        self._next = 0  # next output block index
        self._index: dict[int, int] = {}  # upstream index -> output index (non-text blocks)
        self._text: dict[int, HeldText] = {}
        self._eol = b"\n"
        self._named = True
        self._passes: dict[str, bool] = {}  # name -> a call under it goes on untouched

    def _renumbered(self, event: Event, data: dict[str, Any], out: int) -> Event:
        if data.get("index") == out:
            return event
        return event.with_data({**data, "index": out})

    def _text_block(self, index: int, text: str, out: list[Piece]) -> None:
        self._whole(index, {"type": "text", "text": ""}, {"type": "text_delta", "text": text}, out)

    def _whole(
        self, index: int, block: dict[str, Any], delta: dict[str, Any], out: list[Piece]
    ) -> None:
        """A block made here, whole: its start, one delta, its stop."""
        start = {"type": "content_block_start", "index": index, "content_block": block}
        out.append(self._made("content_block_start", start))
        body = {"type": "content_block_delta", "index": index, "delta": delta}
        out.append(self._made("content_block_delta", body))
        out.append(self._made("content_block_stop", {"type": "content_block_stop", "index": index}))

    def _made(self, name: str, data: dict[str, Any]) -> Event:
        return Event.made(name, data, self._eol, self._named)
