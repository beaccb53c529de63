"""The second pass over a stream: ``<tool_call>`` recovery (``text.recover_tool_calls``),
``inbound.unmapped`` and the tool policy's ``on_denied``.

It takes the events :class:`~bridge_rules.transform.sse.CallPass` hands on
(the same :class:`~bridge_rules.transform.framing.Event` objects, parsed at most once),
so the name/argument rewriting stays where it is and this module only deals with text
blocks and the policies:

* a text block's deltas go through the shared :class:`~bridge_rules.transform.recover.TextScanner`;
  text is released as soon as it cannot belong to a tag, so plain prose streams
  live and only a partial ``<tool_call>``, an open tag's body and the whitespace
  right before a tag are held;
* a recovered call is emitted as its own ``tool_use`` block (start, one
  ``input_json_delta`` with the whole input, stop); the text around it becomes
  separate text blocks, and every later block is renumbered;
* ``message_delta``'s ``stop_reason`` (``end_turn``, ``stop_sequence`` or
  ``max_tokens``) becomes ``tool_use`` once a call was recovered.

With only the policy to apply (no recovery), nothing but a block's start can change
until a call is refused: runs go on whole and only their starts are looked at, those in
the shape Anthropic writes read from their bytes.

The blocks, ids and stop reason are exactly what the non-streaming rewriter
makes of the assembled message, whatever the chunking. Events nothing touches
(and text blocks without tags, when nothing before them was recovered) keep
their bytes.

This module runs the pass and routes each event; each job has its own module, layered
under :class:`SecondPass`: the policy in :mod:`~bridge_rules.transform.second_policy`, the
recovery in :mod:`~bridge_rules.transform.second_recover`, over the counters and block
writing they share in :mod:`~bridge_rules.transform.second_state`.
"""

from __future__ import annotations

import re
from typing import Any

from bridge_rules.transform.framing import (
    NOT_JSON,
    Event,
    Framed,
    Piece,
    events_in,
)
from bridge_rules.transform.recover import RECOVERABLE_STOPS, TextScanner
from bridge_rules.transform.second_recover import RecoveryPass
from bridge_rules.transform.second_state import HeldText
from bridge_rules.transform.shapes import ESCAPE, INDEX, TOOL_START, spaced_json

_TEXT_START = re.compile(
    spaced_json(
        rb'event: content_block_start\ndata: ~\{~"type"~:~"content_block_start"~,~"index"~:~%s~,~'
        rb'"content_block"~:~\{~"type"~:~"text"~,~"text"~:~""~\}~\}~\n\n'
    )
    % INDEX
)
"""An empty text block's start as Anthropic's endpoints write it, or with the spaces and
tabs gateways that re-serialise the stream add (:func:`shapes.spaced_json`): index."""
_START = b"content_block_start"
_BLOCK_EVENTS = frozenset({"content_block_start", "content_block_delta", "content_block_stop"})


class SecondPass(RecoveryPass):
    """Complete SSE events in; recovered ``tool_use`` blocks and the unmapped policy applied."""

    skim = True  # while nothing changed, only block starts are looked at (tests turn it off)

    def run(self, pieces: list[Piece]) -> list[Piece]:
        out: list[Piece] = []
        for piece in pieces:
            if self.skim and self._quiet():
                if type(piece) is Event:
                    raw = piece.raw
                    if (_START not in raw and ESCAPE not in raw) or self._kept(raw, 0, len(raw)):
                        out.append(piece)
                    else:
                        self._event(piece, out)
                    continue
                if piece.whole and piece.find(ESCAPE) < 0:  # type: ignore[union-attr]
                    self._skim(piece, out)  # type: ignore[arg-type]
                    continue
            for event in events_in(piece):
                raw = event.raw
                if (  # a delta or stop of a block passed on as it is: nothing to do
                    self._identity
                    and not self._errors
                    and not self._dropped
                    and b"content_block_start" not in raw
                    and b"message_" not in raw
                    and ESCAPE not in raw
                ):
                    out.append(event)
                else:
                    self._event(event, out)
        return out

    def _quiet(self) -> bool:
        """Nothing recovered, refused or moved so far, and no recovery: then only a block's
        start can change anything (a call the policy refuses, a block that does not keep its
        index); ``message_*`` events, deltas and stops go on as they came."""
        return (
            not self.recover
            and self._identity
            and not self._refused
            and not self._errors
            and not self._dropped
        )

    def _skim(self, run: Framed, out: list[Piece]) -> None:
        """A whole run while :meth:`_quiet`: only block starts are cut out and looked at;
        the rest goes on as runs. Once a start makes the stream not quiet (a refused call),
        the rest of the run goes event by event."""
        size = len(run)
        done = look = 0  # passed on up to ``done``; looking for a start from ``look``
        while (at := run.find(_START, look)) >= 0:
            begin = run.after(run.rfind(b"\n\n", done, at), done)
            end = run.find(b"\n\n", at) + 2
            look = end
            if self._kept(run, begin, end):
                continue
            if begin > done:
                out.append(run.part(done, begin))
            self._event(Event(run[begin:end]), out)
            done = end
            if not self._quiet():
                if done < size:
                    out.extend(self.run([run.part(done, size)]))
                return
        if done == 0:
            out.append(run)
        elif done < size:
            out.append(run.part(done, size))

    def _kept(self, run: bytes, begin: int, end: int) -> bool:
        """A start in the shape Anthropic's endpoints write (a text block's, or a call's
        the policy lets through) that keeps its index, counted as :meth:`_start` counts
        it and left in the run unparsed; False for any other (it is parsed)."""
        name = None
        m = _TEXT_START.fullmatch(run, begin, end)
        if m is None:
            m = TOOL_START.fullmatch(run, begin, end)
            if m is None:
                return False
            try:
                m[2].decode()
                name = m[3].decode()
            except UnicodeDecodeError:
                return False  # not JSON: parsing says so, and it goes on as it came
        index = int(m[1])
        if index != self._next:
            return False
        if name is not None:
            passes = self._passes.get(name)
            if passes is None or name in self.policy.wires:  # mapped back: judged with them
                passes = self._passes[name] = self.policy.passes(name)
            if not passes:
                return False
            self._calls += 1
        self._index[index] = index
        self._next += 1
        return True

    def close(self, pieces: list[Piece]) -> list[Piece]:
        """The last pieces; then, for a stream that ended inside a text block, what it held,
        released as text."""
        out = self.run(pieces)
        for up, block in sorted(self._text.items()):
            held = block.scanner.release()
            if held:
                self._text_event(block, up, held, out)
        self._text.clear()
        return out

    # ------------------------------------------------------------ events
    def _event(self, event: Event, out: list[Piece]) -> None:
        if self._refusing:
            return
        raw = event.raw
        if (
            b"message_start" not in raw
            and b"message_delta" not in raw
            and b'"index"' not in raw
            and ESCAPE not in raw
        ):
            out.append(event)
            return
        if self._plain_text(raw):
            out.append(event)
            return
        data = event.json()
        if data is NOT_JSON or not isinstance(data, dict):
            out.append(event)
            return
        kind = data.get("type")
        self._eol, self._named = event.eol, event.name is not None
        if kind == "message_start":
            message = data.get("message")
            if isinstance(message, dict) and isinstance(message.get("id"), str):
                self.message_id = message["id"]
            out.append(event)
            return
        if kind == "message_delta":
            self._unstopped(out)
            out.append(self._message_delta(event, data))
            return
        if kind == "message_stop":
            self._unstopped(out)
            out.append(event)
            return
        index = data.get("index")
        if not isinstance(index, int):
            out.append(event)
            return
        if kind == "content_block_start":
            self._start(event, data, index, out)
            return
        if index in self._dropped and kind in _BLOCK_EVENTS:
            if kind == "content_block_stop":
                self._dropped.discard(index)
            return
        found = self._errors.get(index)
        if found is not None and kind in _BLOCK_EVENTS:
            self._unmapped(event, data, index, found, out)
            return
        block = self._text.get(index)
        if block is not None and kind in _BLOCK_EVENTS:
            if kind == "content_block_delta":
                self._text_delta(event, data, block, index, out)
                return
            del self._text[index]
            self._text_stop(event, data, block, index, out)
            return
        out.append(self._renumbered(event, data, self._index.get(index, index)))

    def _start(self, event: Event, data: dict[str, Any], index: int, out: list[Piece]) -> None:
        block = data.get("content_block")
        if self.recover and isinstance(block, dict) and block.get("type") == "text":
            scanner = TextScanner(self.scope)
            text = HeldText(event, data, scanner)
            self._text[index] = text
            initial = block.get("text")
            if isinstance(initial, str) and initial:
                self._emit(text, index, scanner.feed(initial), None, out)
            return
        found, action, consumed = self._judged(block, index, out)
        if consumed:
            return
        at = self._next
        self._next += 1
        self._index[index] = at
        if at != index:
            self._identity = False
        if isinstance(block, dict) and block.get("type") == "tool_use":
            if found is not None and action == "text":
                self._as_text(index, at, found, out)
                return
            self._calls += 1
        out.append(self._renumbered(event, data, at))

    def _unstopped(self, out: list[Piece]) -> None:
        """Blocks whose ``content_block_stop`` never came (a malformed stream) end before the
        message does: a recovered text block's held text, a refused call's explanation."""
        for index, block in sorted(self._text.items()):
            self._emit(block, index, block.scanner.finish(), None, out)
            self._close_segment(block, out)
        self._text.clear()
        for index, found in sorted(self._errors.items()):
            stop = {"type": "content_block_stop", "index": index}
            self._unmapped(self._made("content_block_stop", stop), stop, index, found, out)

    def _message_delta(self, event: Event, data: dict[str, Any]) -> Event:
        delta = data.get("delta")
        if not isinstance(delta, dict):
            return event
        stop = delta.get("stop_reason")
        if self.recovered and stop in RECOVERABLE_STOPS:
            stop = "tool_use"
        if stop == "tool_use" and self._refused and not self._recovered_out and not self._calls:
            stop = "end_turn"  # every call was turned into text or dropped: nothing left to run
        if stop == delta.get("stop_reason"):
            return event
        return event.with_data({**data, "delta": {**delta, "stop_reason": stop}})
