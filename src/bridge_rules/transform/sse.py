"""Tool calls in an Anthropic Messages SSE stream mapped back, byte-exact where nothing applies.

:class:`CallPass` is one pass over the events :mod:`~bridge_rules.transform.framing`
cuts. Runs of events are sorted by their bytes before anything is parsed (event kinds
and block types are found as every producer writes them, not spelt with ``\\u``
escapes); only an event that may change is parsed, and it passes on either as it came
or rebuilt with its own line ending:

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
from collections.abc import Iterable
from typing import Any

from bridge_rules import jsonio
from bridge_rules.calls import ToolCall, adapts_arguments, inbound_call
from bridge_rules.runtime import Runtime
from bridge_rules.schemas.book import Shapes
from bridge_rules.transform.framing import Event, EventStream, Framed, Piece
from bridge_rules.transform.inbound import freeze
from bridge_rules.transform.references import references_in
from bridge_rules.transform.results import CallSealer
from bridge_rules.transform.unmapped import InboundReport

_KINDS = frozenset({"content_block_start", "content_block_delta", "content_block_stop", "error"})
_START = b"content_block_start"
_FIND_START = re.compile(_START).search  # a literal search in sre beats bytes.find on prose
_MESSAGE_END = ("message_delta", "message_stop")


class _Held:
    """A tool block whose argument deltas (and, for a sealed call, start) wait for its stop."""

    __slots__ = ("adapts", "clean", "deltas", "id", "partial", "start", "wire")

    def __init__(self, wire: str, ident: Any, adapts: bool) -> None:
        self.wire = wire
        self.id = ident
        self.adapts = adapts  # the input is adapted (else only the start waits for its id)
        self.start: Event | None = None  # held until the call's id is known
        self.deltas: list[Event] = []
        self.partial: list[str] = []
        self.clean = True


class CallPass:
    """Names mapped back, arguments adapted, ids sealed; everything else as it came."""

    def __init__(
        self,
        rt: Runtime,
        registered: tuple[str, ...] | None,
        sealer: CallSealer | None = None,
        report: InboundReport | None = None,
        shapes: Shapes | None = None,
    ) -> None:
        self.rt = rt
        self.registered = registered
        self.shapes = shapes
        self.sealer = sealer
        self.report = report  # receives the names mapped back
        self._held: dict[int, _Held] = {}
        self._plans: dict[str, tuple[str | None, bool, bool]] = {}  # by wire name

    def run(self, pieces: list[Piece]) -> list[Piece]:
        if len(pieces) == 1 and type(pieces[0]) is Framed and pieces[0].whole:
            if not self._held and _FIND_START(pieces[0]) is None:
                return pieces  # the common case: one run as framed, no block starts in it
            return self._whole(pieces[0], [])
        out: list[Piece] = []
        for piece in pieces:
            if type(piece) is Event:
                self._event(piece, out)
            elif piece.whole:  # type: ignore[union-attr]
                self._whole(piece, out)  # type: ignore[arg-type]
            else:
                for event in piece.events():  # type: ignore[union-attr]
                    self._event(event, out)
        return out

    def _whole(self, run: Framed, out: list[Piece]) -> list[Piece]:
        """A run not split yet: only the events that can change are cut out of it (the
        start of a block whose type names a tool, and what follows while a block is
        held); the rest goes on as runs."""
        size = len(run)
        done = look = 0  # handed on up to ``done``; looking for a start from ``look``
        while done < size:
            if self._held:
                end = run.find(b"\n\n", done) + 2
                self._event(Event(run[done:end]), out)
                done = look = end
                continue
            found = _FIND_START(run, look)
            if found is None:
                break
            at = found.start()
            before = run.rfind(b"\n\n", done, at)  # the boundary before this event
            end = run.find(b"\n\n", at) + 2
            look = end
            if run.find(b"tool", done if before < 0 else before, end) < 0:
                continue  # tool_use, tool_result, tool_search_...: nothing else can change
            begin = run.after(before, done)
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
        if not held and (_START not in event.raw or b"tool" not in event.raw):
            out.append(event)
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
            else:
                block.clean = False
        elif kind == "content_block_stop":
            assert isinstance(index, int)
            self._flush(index, out, event)
            out.append(event)
        else:
            out.append(event)

    def _start(self, event: Event, data: dict[str, Any], out: list[Piece]) -> None:
        index = data.get("index")
        if isinstance(index, int) and index in self._held:  # a duplicate start: flush first
            self._flush(index, out)
        block = data.get("content_block")
        if not isinstance(block, dict) or block.get("type") != "tool_use":
            renamed = references_in(self.rt, block, self.registered)
            out.append(
                event if renamed is block else event.with_data({**data, "content_block": renamed})
            )
            return
        name = block.get("name")
        if not isinstance(name, str):
            out.append(event)
            return
        rt, reg = self.rt, self.registered
        plan = self._plans.get(name)
        if plan is None:
            local = rt.inbound_name(name, reg)
            sealing = self.sealer is not None and self.sealer.may_seal(local or name)
            adapts = adapts_arguments(rt, name, reg, self.shapes)
            plan = self._plans[name] = (local, adapts, sealing)
        local, adapts, sealing = plan
        new_block = block
        held = None
        if adapts or sealing:
            args = block.get("input")
            if isinstance(args, dict) and args:  # whole input up front: adapt it here
                call = inbound_call(rt, name, args, reg, self.shapes)
                new_block = {**block, "name": call.name, "input": call.arguments}
                new_id = self._sealed(block.get("id"), call)
                if new_id != block.get("id"):
                    new_block["id"] = new_id
            elif isinstance(index, int):
                held = self._held[index] = _Held(name, block.get("id"), adapts)
        if new_block is block and local is not None and local != name:
            new_block = {**block, "name": local}
        if new_block is not block:
            if self.report is not None and new_block["name"] != name:
                self.report.rename(name, new_block["name"])
            event = event.with_data({**data, "content_block": new_block})
        if held is not None and sealing:
            held.start = event
        else:
            out.append(event)

    # ------------------------------------------------------- releasing
    def _flush(self, index: int, out: list[Piece], stop: Event | None = None) -> None:
        """One held block, before its ``stop`` (or when its stop never came): the start with
        the id it was sealed with, then one delta with the adapted input; both as received
        when the input is not a whole JSON object."""
        held = self._held.pop(index)
        like = stop or (held.deltas[0] if held.deltas else None)  # a new delta is written like it
        call = self._call(held) if like is not None or held.start is not None else None
        start = held.start
        if start is not None:
            if call is not None:
                new_id = self._sealed(held.id, call)
                if new_id != held.id:
                    data = start.json()
                    block = {**data["content_block"], "id": new_id}
                    start = start.with_data({**data, "content_block": block})
            out.append(start)
        if call is None or not held.adapts or like is None:
            out.extend(held.deltas)
            return
        delta = {
            "type": "content_block_delta",
            "index": index,
            "delta": {
                "type": "input_json_delta",
                "partial_json": jsonio.dumps(call.arguments).decode(),
            },
        }
        out.append(Event.made("content_block_delta", delta, like.eol, like.name is not None))

    def _call(self, held: _Held) -> ToolCall | None:
        """The call in local shape, or None when the held input is not a whole JSON object."""
        if not held.clean:
            return None
        text = "".join(held.partial)
        try:
            args = jsonio.loads(text) if text.strip() else {}
        except jsonio.JSONDecodeError:
            return None
        if not isinstance(args, dict):
            return None
        call = inbound_call(self.rt, held.wire, args, self.registered, self.shapes)
        if held.start is None:  # not sealed at the stop: noted here, as the id went out
            self._sealed(held.id, call)
        return call

    def _sealed(self, call_id: Any, call: ToolCall) -> Any:
        if self.sealer is None or not isinstance(call_id, str):
            return call_id
        return self.sealer.seal(call_id, call)

    def _release_all(self, out: list[Piece]) -> None:
        """Everything held, as received (an error event, or the end of the stream)."""
        for _, held in sorted(self._held.items()):
            if held.start is not None:
                out.append(held.start)
            out.extend(held.deltas)
        self._held.clear()


class StreamRewriter(EventStream):
    """Feed bytes in any chunking; get rewritten bytes out. ``close()`` flushes the tail."""

    def __init__(
        self,
        rt: Runtime,
        registered: Iterable[str] | None = None,
        sealer: CallSealer | None = None,
        report: InboundReport | None = None,
        shapes: Shapes | None = None,
    ) -> None:
        self.registered = freeze(registered)
        super().__init__([CallPass(rt, self.registered, sealer, report, shapes)])
