"""Tool calls in an Anthropic Messages SSE stream mapped back, byte-exact where nothing applies.

:class:`CallPass` is one pass over the events :mod:`~bridge_rules.transform.framing`
cuts. Runs of events are sorted by their bytes before anything is parsed (event kinds
and block types are found as every producer writes them, not spelt with ``\\u``
escapes); a tool call's events in the shape Anthropic's endpoints write are read from
their bytes (:mod:`~bridge_rules.transform.shapes`; a whole call in one run at once),
any other event that may change is parsed, and it passes on either as it came or
rebuilt with its own line ending:

* ``content_block_start`` of a ``tool_use`` block: the name is mapped back at
  once (the name occurs only there);
* when the call's binding changes arguments (``adapts_arguments``), that block's
  ``input_json_delta`` events are held and replaced at ``content_block_stop`` by
  one delta carrying the adapted input. Input that does not parse (fine-grained
  streaming cut by ``max_tokens``) is released untouched;
* when a :class:`~bridge_rules.transform.results.CallSealer` may give the call a new
  id (``may_seal``), its ``content_block_start`` is held with the deltas and goes out
  at ``content_block_stop`` with the id ``seal`` answers;
* everything else (text, thinking, ping, comments, ``error`` after a 200) goes
  out as soon as its event is complete. An ``error`` releases what is held first.

Malformed streams never lose arguments: a second ``content_block_start`` for a block
still held, and a ``message_delta`` or ``message_stop`` while blocks are held (their
``content_block_stop`` never came), first flush what is held, adapted when it parses as
a whole object and as received otherwise; the end of a truncated stream releases it.
"""

from __future__ import annotations

import re
from typing import Any

from bridge_rules import jsonio
from bridge_rules.calls import adapts_arguments
from bridge_rules.transform.framing import Event, EventStream, Framed, Piece
from bridge_rules.transform.held import Held, HeldCalls, Plan
from bridge_rules.transform.references import references_in
from bridge_rules.transform.scope import CallScope
from bridge_rules.transform.shapes import (
    ARGS_DELTA,
    BLOCK_KEY,
    ESCAPE,
    PIECES,
    STOP,
    TOOL_START,
    WHOLE_CALL,
    args_delta,
    is_utf8,
    string_text,
    tool_start,
)

_KINDS = frozenset({"content_block_start", "content_block_delta", "content_block_stop", "error"})
_START = b"content_block_start"
_MESSAGE_END = ("message_delta", "message_stop")


class CallPass(HeldCalls):
    """Names mapped back, arguments adapted, ids sealed; everything else as it came."""

    fast = True  # events in the common shape read from their bytes (tests turn it off)

    def run(self, pieces: list[Piece]) -> list[Piece]:
        if len(pieces) == 1:
            run = pieces[0]
            # Framed.whole, inlined: a property call per chunk is a tenth of what one costs
            if type(run) is Framed and run._events is None and not run.cr and run.find(ESCAPE) < 0:
                look = 0
                if not self._held:
                    look = run.find(BLOCK_KEY)
                    if look < 0:
                        return pieces  # the common case: one run as framed, no start in it
                return self._whole(run, [], look)
        out: list[Piece] = []
        for piece in pieces:
            if type(piece) is Event:
                self._event(piece, out)
            elif piece.whole and piece.find(ESCAPE) < 0:  # type: ignore[union-attr]
                self._whole(piece, out)  # type: ignore[arg-type]
            else:
                for event in piece.events():  # type: ignore[union-attr]
                    self._event(event, out)
        return out

    def _whole(self, run: Framed, out: list[Piece], look: int = 0) -> list[Piece]:
        """A run not split yet: only the events that can change are cut out of it (the
        start of a block whose type names a tool, and what follows while a block is
        held); the rest goes on as runs. No block starts before ``look``."""
        size = len(run)
        done = 0  # handed on up to ``done``; looking for a start from ``look``
        fast, held = self.fast, self._held
        while done < size:
            if held:
                cut = self._held_in_run(run, done, out) if fast else -1
                if cut >= 0:
                    done = look = cut
                    continue
                end = run.find(b"\n\n", done) + 2
                self._event(Event(run[done:end]), out)
                done = look = end
                continue
            at = run.find(BLOCK_KEY, look)
            if at < 0:
                break
            before = run.rfind(b"\n\n", done, at)  # the boundary before this event
            end = run.find(b"\n\n", at) + 2
            look = end
            if run.find(b"tool", done if before < 0 else before, end) < 0:
                continue  # tool_use, tool_result, tool_search_...: nothing else can change
            begin = run.after(before, done)
            cut = self._call_in_run(run, done, begin, out) if fast else -1
            if cut >= 0:
                done, look = cut, max(look, cut)
                continue
            if begin > done:
                out.append(run.part(done, begin))
            self._event(Event(run[begin:end]), out)
            done = end
        if done == 0:
            out.append(run)
        elif done < size:
            out.append(run.part(done, size))
        return out

    def close(self, pieces: list[Piece]) -> list[Piece]:
        """The last pieces after what is still held, as received."""
        last = self.run(pieces)
        out: list[Piece] = []
        self._release_all(out)
        return out + last

    # ---------------------------------------------------------- events
    def _event(self, event: Event, out: list[Piece]) -> None:
        held = self._held
        raw = event.raw
        if not held:
            if (_START not in raw or b"tool" not in raw) and ESCAPE not in raw:
                out.append(event)
                return
        elif self.fast and self._shaped(held, event, out):
            return
        if self.fast:
            start = TOOL_START.fullmatch(raw)
            if start is not None and self._tool_start(event, start, out):
                return
        kind = event.kind
        if kind not in _KINDS:
            if held and kind in _MESSAGE_END:  # held blocks whose stop never came go first
                for at in sorted(held):
                    self._flush(at, out)
            out.append(event)
            return
        if kind == "error":
            self._release_all(out)
            out.append(event)
            return
        data = event.json() if held or kind == "content_block_start" else None
        if not isinstance(data, dict):
            out.append(event)
            return
        if kind == "content_block_start":
            self._start(event, data, out)
            return
        index = data.get("index")
        block = held.get(index) if isinstance(index, int) else None
        if block is None:
            out.append(event)
        elif kind == "content_block_delta":
            delta = data.get("delta")
            block.deltas.append(event)
            if (
                isinstance(delta, dict)
                and delta.get("type") == "input_json_delta"
                and isinstance(delta.get("partial_json"), str)
            ):
                block.partial.append(delta["partial_json"])
                block.decoded = True
            else:
                block.clean = False
        elif kind == "content_block_stop":
            assert isinstance(index, int)
            self._flush(index, out, event)
            out.append(event)
        else:
            out.append(event)

    def _shaped(self, held: dict[int, Held], event: Event, out: list[Piece]) -> bool:
        """An argument delta or a stop in the common shape, read from its bytes; False
        for any other event (it is parsed)."""
        raw = event.raw
        m = ARGS_DELTA.fullmatch(raw)
        if m is not None:
            piece = m[2]
            if not (piece.isascii() or is_utf8(piece)):
                return False  # not JSON: parsing says so, and it goes on as it came
            block = held.get(int(m[1]))
            if block is None:
                out.append(event)
            else:
                block.deltas.append(event)
                block.partial.append(piece)
            return True
        m = STOP.fullmatch(raw)
        if m is None:
            return False
        index = int(m[1])
        if index in held:
            self._flush(index, out, event, True)
        out.append(event)
        return True

    def _tool_start(self, event: Event, m: re.Match[bytes], out: list[Piece]) -> bool:
        """A tool block's start in the common shape (its input streamed after it). False
        when its strings are not UTF-8 (it is parsed)."""
        try:
            name = m[3].decode()
            ident = m[2].decode()
        except UnicodeDecodeError:
            return False
        index = int(m[1])
        if index in self._held:  # a duplicate start: flush first
            self._flush(index, out)
        self._open(event, m, out, (name, ident, index), plan=self._plan(name))
        return True

    def _held_in_run(self, run: Framed, done: int, out: list[Piece]) -> int:
        """Argument deltas of held blocks from ``done``, and a held block's stop, in the
        common shape: read where they are. Where they end (a stop stays in the run, after
        its block's flush), or -1 (the event there goes on its own)."""
        held = self._held
        at = done
        m = ARGS_DELTA.match(run, at)
        while m is not None:
            piece = m[2]
            block = held.get(int(m[1]))
            if block is None or not (piece.isascii() or is_utf8(piece)):
                break
            end = m.end()
            block.deltas.append(Event(run[at:end]))
            block.partial.append(piece)
            at = end
            m = ARGS_DELTA.match(run, at)
        m = STOP.match(run, at)
        if m is not None and int(m[1]) in held:
            self._flush(int(m[1]), out, Event(run[at : m.end()]), True)
            return at
        return at if at > done else -1

    def _call_in_run(self, run: Framed, done: int, begin: int, out: list[Piece]) -> int:
        """A call whose start, argument deltas and stop are all in ``run`` from ``begin``,
        in the common shape: its name mapped back in its bytes, its arguments read and
        adapted at once; what comes before it from ``done`` passed on. Where the bytes
        passed on end, or -1 (the events go one by one)."""
        m = WHOLE_CALL(run, begin)
        if m is None:
            return self._start_in_run(run, done, begin, out)
        at, end = m.span(4)  # the argument deltas
        try:
            name = m[3].decode()
            if not run.isascii():
                m[2].decode()
                run[at:end].decode()
        except UnicodeDecodeError:
            return -1
        local, adapts, sealing, written = plan = self._plans.get(name) or self._plan(name)
        if sealing or (adapts and self.scope.sealer is not None):  # held, to seal or note the id
            if begin > done:
                out.append(run.part(done, begin))
            index = int(m[1])
            start = Event(run[begin:at])
            held = self._open(start, m, out, (name, m[2].decode(), index), plan=plan)
            assert held is not None
            if end > at:
                held.deltas.append(run.part(at, end))
                held.partial = PIECES(run, at, end)
            self._flush(index, out, Event(run[end : m.end()]), True)
            return end
        if written is None:
            if not adapts:
                return done  # nothing changes
            out.append(run.part(done, at))
        else:
            if begin > done:
                out.append(run.part(done, begin))
            out.append(self._renamed(name, local, tool_start(int(m[1]), m[2], written)))
            if not adapts:
                return at
        call = self._adapted(name, string_text(b"".join(PIECES(run, at, end))))
        if call is None:
            return at  # the deltas go on as received
        out.append(args_delta(int(m[1]), call))
        return end

    def _start_in_run(self, run: Framed, done: int, begin: int, out: list[Piece]) -> int:
        """A tool block's start in the common shape whose call goes on past ``run``: renamed
        in its bytes, or held; what comes before it passed on. Where the bytes passed on
        end, or -1 (the event goes on its own)."""
        m = TOOL_START.match(run, begin)
        if m is None:
            return -1
        try:
            name = m[3].decode()
            ident = m[2].decode()
        except UnicodeDecodeError:
            return -1
        plan = self._plans.get(name) or self._plan(name)
        _, adapts, sealing, written = plan
        if written is None and not adapts and not sealing:
            return done  # nothing changes
        if begin > done:
            out.append(run.part(done, begin))
        start = Event(run[begin : m.end()])
        self._open(start, m, out, (name, ident, int(m[1])), plan=plan)
        return m.end()

    def _plan(self, name: str) -> Plan:
        plan = self._plans.get(name)
        if plan is None:
            scope = self.scope
            local = scope.local_name(name)
            sealing = scope.sealer is not None and scope.sealer.may_seal(local or name)
            written = jsonio.dumps(local)[1:-1] if local is not None and local != name else None
            adapts = adapts_arguments(scope.rt, name, scope.registered, scope.shapes)
            plan = self._plans[name] = (local, adapts, sealing, written)
        return plan

    def _start(self, event: Event, data: dict[str, Any], out: list[Piece]) -> None:
        index = data.get("index")
        if isinstance(index, int) and index in self._held:  # a duplicate start: flush first
            self._flush(index, out)
        block = data.get("content_block")
        if not isinstance(block, dict) or block.get("type") != "tool_use":
            renamed = references_in(self.scope.rt, block, self.scope.registered)
            out.append(
                event if renamed is block else event.with_data({**data, "content_block": renamed})
            )
            return
        name = block.get("name")
        if not isinstance(name, str):
            out.append(event)
            return
        local, adapts, sealing, _ = self._plan(name)
        new_block = block
        held = None
        if adapts or sealing:
            args = block.get("input")
            if isinstance(args, dict) and args:  # whole input up front: adapt it here
                call = self.scope.call(name, args)
                new_block = {**block, "name": call.name, "input": call.arguments}
                new_id = self.scope.seal(block.get("id"), call)
                if new_id != block.get("id"):
                    new_block["id"] = new_id
            elif isinstance(index, int):
                held = self._held[index] = Held(name, block.get("id"), adapts)
        if new_block is block and local is not None and local != name:
            new_block = {**block, "name": local}
        if new_block is not block:
            if new_block["name"] != name:
                self.scope.renamed(name, new_block["name"])
            event = event.with_data({**data, "content_block": new_block})
        if held is not None and sealing:
            held.start = event
        else:
            out.append(event)


class StreamRewriter(EventStream):
    """Feed bytes in any chunking; get rewritten bytes out. ``close()`` flushes the tail."""

    def __init__(self, scope: CallScope) -> None:
        super().__init__([CallPass(scope)])
