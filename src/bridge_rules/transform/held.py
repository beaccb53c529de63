"""Tool blocks held until their stop, for :class:`~bridge_rules.transform.sse.CallPass`.

The state one stream's call pass keeps, and the decisions it takes per call: the plan for
each wire name (worked out once per stream), a start renamed or held, and the flush at a
block's stop: the input adapted by ``inbound_call`` and written as one delta, the id
sealed, or everything released as received when the input is not a whole JSON object.
"""

from __future__ import annotations

import re
from typing import Any

from bridge_rules import jsonio
from bridge_rules.calls import ToolCall
from bridge_rules.transform.framing import Event, Piece, events_in
from bridge_rules.transform.scope import CallScope
from bridge_rules.transform.shapes import args_delta, delta_data, string_text, tool_start

StartRead = tuple[str, str, int]
"""A tool block's start read from its bytes: the name, the id, the index."""
Plan = tuple[str | None, bool, bool, bytes | None]
"""For a wire name: its local name, whether its arguments are adapted, whether its id
may be sealed, and the local name as written in JSON when it differs."""


class Held:
    """A tool block whose argument deltas (and, for a sealed call, start) wait for its stop."""

    __slots__ = ("adapts", "clean", "decoded", "deltas", "id", "partial", "start", "wire")

    def __init__(self, wire: str, ident: Any, adapts: bool) -> None:
        self.wire = wire
        self.id = ident
        self.adapts = adapts  # the input is adapted (else only the start waits for its id)
        self.start: Event | None = None  # held until the call's id is known
        self.deltas: list[Piece] = []
        # the pieces of the input: decoded, or the bytes between a string's quotes
        self.partial: list[str | bytes] = []
        self.decoded = False  # some pieces were parsed from their event (str)
        self.clean = True

    def text(self) -> str:
        parts = self.partial
        if not self.decoded:  # all bytes between quotes, no \\u in them: decoded at once
            return string_text(b"".join(parts))  # type: ignore[arg-type]
        return "".join(p if type(p) is str else string_text(p) for p in parts)  # type: ignore[arg-type]


class HeldCalls:
    """Per stream: the plans by wire name, the blocks held by index."""

    def __init__(self, scope: CallScope) -> None:
        self.scope = scope
        self._held: dict[int, Held] = {}
        self._plans: dict[str, Plan] = {}  # by wire name
        self._as_sent = False
        """The last call flushed needed no change to its arguments."""

    def _open(
        self,
        event: Event,
        m: re.Match[bytes],
        out: list[Piece],
        call: StartRead,
        *,
        plan: Plan,
    ) -> Held | None:
        """A tool block's start (matched by ``m``) with its name mapped back, written as
        rebuilding it would write it; passed on, or held with its deltas."""
        name, ident, index = call
        local, adapts, sealing, written = plan
        if written is not None:
            event = self._renamed(name, local, tool_start(index, m[2], written))
        held = None
        if adapts or sealing:
            held = self._held[index] = Held(name, ident, adapts)
            if sealing:
                held.start = event
                return held
        out.append(event)
        return held

    def _renamed(self, name: str, local: str | None, raw: bytes) -> Event:
        """A start in the common shape, ``raw`` with its name mapped back, noted."""
        assert local is not None
        self.scope.renamed(name, local)
        return Event(raw)

    def _flush(
        self, index: int, out: list[Piece], stop: Event | None = None, common: bool = False
    ) -> None:
        """One held block, before its ``stop`` (or when its stop never came): the start with
        the id it was sealed with, then one delta with the adapted input; both as received
        when the input is not a whole JSON object. ``common``: the stop has the common
        shape."""
        held = self._held.pop(index)
        # a new delta is written like the stop, or like the first delta
        like = stop or (events_in(held.deltas[0])[0] if held.deltas else None)
        call = self._call(held) if like is not None or held.start is not None else None
        start = held.start
        if start is not None:
            if call is not None:
                new_id = self.scope.seal(held.id, call)
                if new_id != held.id:
                    data = start.json()
                    block = {**data["content_block"], "id": new_id}
                    start = start.with_data({**data, "content_block": block})
            out.append(start)
        if call is None or not held.adapts or like is None or self._as_sent:
            out.extend(held.deltas)
            return
        if common:  # written like the stop, in the common shape
            out.append(args_delta(index, call))
        else:
            delta = delta_data(index, call)
            out.append(Event.made("content_block_delta", delta, like.eol, like.name is not None))

    def _call(self, held: Held) -> ToolCall | None:
        """The call in local shape, or None when the held input is not a whole JSON object."""
        self._as_sent = False
        if not held.clean:
            return None
        call = self._adapted(held.wire, held.text())
        if call is not None and held.start is None:  # not sealed at the stop: noted here
            self.scope.seal(held.id, call)
        return call

    def _adapted(self, wire: str, text: str) -> ToolCall | None:
        try:
            args = jsonio.loads(text) if text.strip() else {}
        except jsonio.JSONDecodeError:
            return None
        if not isinstance(args, dict):
            return None
        call = self.scope.call(wire, args)
        self._as_sent = call.arguments is args  # nothing adapted: the deltas go as they came
        return call

    def _release_all(self, out: list[Piece]) -> None:
        """Everything held, as received (an error event, or the end of the stream)."""
        for _, held in sorted(self._held.items()):
            if held.start is not None:
                out.append(held.start)
            out.extend(held.deltas)
        self._held.clear()
