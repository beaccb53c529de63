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
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from bridge_rules import jsonio
from bridge_rules.transform.framing import (
    NOT_JSON,
    Event,
    Framed,
    Piece,
    events_in,
)
from bridge_rules.transform.recover import (
    RECOVERABLE_STOPS,
    Recovered,
    TextScanner,
    call_id,
    merge_text,
)
from bridge_rules.transform.report import Unmapped
from bridge_rules.transform.scope import CallScope
from bridge_rules.transform.shapes import TOOL_START
from bridge_rules.transform.unmapped import UnmappedPolicy, refusal_body

_TEXT_START = re.compile(
    rb'event: content_block_start\ndata: \{"type": ?"content_block_start", ?'
    rb'"index": ?(0|[1-9][0-9]{0,8}), ?"content_block": ?\{"type": ?"text", ?"text": ?""\}\}\n\n'
)
"""An empty text block's start as Anthropic's endpoints write it (or with the spaces
Python's ``json.dumps`` puts after ``:`` and ``,``): index."""
_START = b"content_block_start"
_BLOCK_EVENTS = frozenset({"content_block_start", "content_block_delta", "content_block_stop"})


@dataclass
class _Text:
    """A text block under recovery: its held start event and the open output segment."""

    start: Event
    data: dict[str, Any]
    scanner: TextScanner
    out: int | None = None  # output index of the text segment being written
    emitted: bool = False  # any text or call came out of this block


class SecondPass:
    """Complete SSE events in; recovered ``tool_use`` blocks and the unmapped policy applied."""

    skim = True  # while nothing changed, only block starts are looked at (tests turn it off)

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
        self._text: dict[int, _Text] = {}
        self._eol = b"\n"
        self._named = True
        self._passes: dict[str, bool] = {}  # name -> a call under it goes on untouched

    def run(self, pieces: list[Piece]) -> list[Piece]:
        out: list[Piece] = []
        for piece in pieces:
            if self.skim and self._quiet():
                if type(piece) is Event:
                    raw = piece.raw
                    if _START not in raw or self._kept(raw, 0, len(raw)):
                        out.append(piece)
                    else:
                        self._event(piece, out)
                    continue
                if piece.whole:  # type: ignore[union-attr]
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
        if b"message_start" not in raw and b"message_delta" not in raw and b'"index"' not in raw:
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

    def _plain_text(self, raw: bytes) -> bool:
        """Prose in a text block with nothing held goes out as it came, unparsed.

        Only when the one open text block keeps its index, the delta cannot hold a ``<``
        (also not escaped), and the scanner holds nothing: then the scanner would release
        the delta's text unchanged, so parsing it would change nothing.
        """
        if len(self._text) != 1 or b'"text_delta"' not in raw:
            return False
        if b"<" in raw or b"\\u003" in raw or b"message_" in raw:
            return False
        ((up, block),) = self._text.items()
        if block.out != up or not block.scanner.plain:
            return False
        return b'"index":%d,' % up in raw or b'"index":%d}' % up in raw

    def _renumbered(self, event: Event, data: dict[str, Any], out: int) -> Event:
        if data.get("index") == out:
            return event
        return event.with_data({**data, "index": out})

    def _start(self, event: Event, data: dict[str, Any], index: int, out: list[Piece]) -> None:
        block = data.get("content_block")
        if self.recover and isinstance(block, dict) and block.get("type") == "text":
            scanner = TextScanner(self.scope)
            text = _Text(event, data, scanner)
            self._text[index] = text
            initial = block.get("text")
            if isinstance(initial, str) and initial:
                self._emit(text, index, scanner.feed(initial), None, out)
            return
        found: Unmapped | None = None
        action: str | None = None
        if isinstance(block, dict) and block.get("type") == "tool_use":
            name = block.get("name")
            found = self.policy.check(name) if isinstance(name, str) else None
            action = None if found is None else self.policy.action(found)
            if action == "error" and self.policy.refusal is not None:
                self._refusing, self._identity = True, False
                out.append(self._made("error", refusal_body(self.policy.refusal)))
                return
            if action == "drop":
                self._dropped.add(index)
                self._refused += 1
                self._identity = False  # later blocks move up: their events are renumbered
                return
        at = self._next
        self._next += 1
        self._index[index] = at
        if at != index:
            self._identity = False
        if isinstance(block, dict) and block.get("type") == "tool_use":
            if found is not None and action == "text":
                self._errors[index] = found
                self._refused += 1
                empty = {"type": "text", "text": ""}
                start = {"type": "content_block_start", "index": at, "content_block": empty}
                out.append(self._made("content_block_start", start))
                return
            self._calls += 1
        out.append(self._renumbered(event, data, at))

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

    def _text_delta(
        self, event: Event, data: dict[str, Any], block: _Text, index: int, out: list[Piece]
    ) -> None:
        delta = data.get("delta")
        if (
            isinstance(delta, dict)
            and delta.get("type") == "text_delta"
            and isinstance(delta.get("text"), str)
        ):
            pieces = block.scanner.feed(delta["text"])
            self._emit(block, index, pieces, (event, data), out)
            return
        # citations and other deltas: keep them in the text segment being written
        self._open_segment(block, index, out)
        assert block.out is not None
        out.append(self._renumbered(event, data, block.out))

    def _text_stop(
        self, event: Event, data: dict[str, Any], block: _Text, index: int, out: list[Piece]
    ) -> None:
        self._emit(block, index, block.scanner.finish(), None, out)
        if not block.emitted:  # an empty text block: keep it, as the message keeps it
            self._open_segment(block, index, out)
        if block.out is not None:
            out.append(self._renumbered(event, data, block.out))

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

    # ---------------------------------------------------------- emitting
    def _emit(
        self,
        block: _Text,
        index: int,
        pieces: list[Any],
        source: tuple[Event, dict[str, Any]] | None,
        out: list[Piece],
    ) -> None:
        for piece in merge_text(pieces):
            block.emitted = True
            if isinstance(piece, Recovered):
                self._close_segment(block, out)
                self._tool_use(piece, out)
                continue
            self._open_segment(block, index, out)
            if source is not None:
                event, data = source
                delta = data["delta"]
                if delta["text"] == piece and data.get("index") == block.out:
                    out.append(event)
                else:
                    new = {**data, "index": block.out, "delta": {**delta, "text": piece}}
                    out.append(event.with_data(new))
            else:
                self._text_event(block, index, piece, out)

    def _open_segment(self, block: _Text, index: int, out: list[Piece]) -> None:
        if block.out is not None:
            return
        block.out = self._next
        self._next += 1
        content = block.data.get("content_block")
        content = {**content, "text": ""} if isinstance(content, dict) else content
        if block.out == index and content == block.data.get("content_block"):
            out.append(block.start)
            return
        new = {**block.data, "index": block.out, "content_block": content}
        out.append(block.start.with_data(new))

    def _close_segment(self, block: _Text, out: list[Piece]) -> None:
        if block.out is None:
            return
        stop = {"type": "content_block_stop", "index": block.out}
        out.append(self._made("content_block_stop", stop))
        block.out = None

    def _text_event(self, block: _Text, index: int, text: str, out: list[Piece]) -> None:
        self._open_segment(block, index, out)
        delta = {
            "type": "content_block_delta",
            "index": block.out,
            "delta": {"type": "text_delta", "text": text},
        }
        out.append(self._made("content_block_delta", delta))

    def _tool_use(self, call: Recovered, out: list[Piece]) -> None:
        """A recovered call as its own block, or, when the policy denies its tool, what
        ``on_denied`` makes of it: the same blocks a message answer gets."""
        found = self.policy.check(call.name)
        action = None if found is None else self.policy.action(found)
        if action == "error" and self.policy.refusal is not None:
            self._refusing, self._identity = True, False
            out.append(self._made("error", refusal_body(self.policy.refusal)))
            return
        ident = call_id(self.message_id, self.recovered, call)
        self.recovered += 1
        if action == "drop":
            self._refused += 1
            return
        index = self._next
        self._next += 1
        if found is not None and action == "text":
            self._refused += 1
            self._text_block(index, self.policy.text(found), out)
            return
        ident = self.scope.seal(ident, call)
        block = {"type": "tool_use", "id": ident, "name": call.name, "input": {}}
        self._recovered_out += 1
        partial = jsonio.dumps(call.arguments).decode()
        self._whole(index, block, {"type": "input_json_delta", "partial_json": partial}, out)

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
