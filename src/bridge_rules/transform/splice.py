"""One request through the message cache: cut what the store holds, parse the rest, splice.

:mod:`bridge_rules.transform.cached` says why the result is byte for byte the plain path's;
this is the work: the cuts (the messages the store holds, a remembered ``tools`` array),
the parse of what is left, the ``messages`` and ``tools`` steps, the splice of the stored
outputs into the serialised rest, and what this request adds to the store.
"""

from __future__ import annotations

import secrets
from collections.abc import Hashable, Mapping
from typing import Any, NamedTuple

import orjson

from bridge_rules import jsonio
from bridge_rules.msgcache import Draft, Entry, MessageCache, ToolsEntry
from bridge_rules.runtime import Runtime
from bridge_rules.transform.outbound import (
    OutboundResult,
    Rewriter,
    ToolsOutcome,
    rewrite_with,
    tools_outcome,
)

_KEY = b'"messages":['
_MARK = "\x00bridge-rules cut " + secrets.token_hex(16)
_MARK_JSON = orjson.dumps(_MARK)
_TOOLS_KEY = b'"tools":'
_TOOLS_MARK = "\x00bridge-rules tools " + secrets.token_hex(16)
_TOOLS_MARK_JSON = orjson.dumps(_TOOLS_MARK)
_CODEC = "jsonio"
"""The one codec (:mod:`bridge_rules.jsonio`): the context a stored ``tools`` array needs."""
_COMMA, _CLOSE = ord(","), ord("]")
_ONE_BY_ONE = 4
"""The newest messages of a request are stored one by one, the older ones as one run."""
_OPENING = 128
"""Bytes of the messages array that say "the same conversation as before" (``seen_before``)."""
_BLANKS = (b" ", b"\t", b"\n", b"\r")
_BACKSLASH = ord("\\")


def spaced(body: bytes) -> bool:
    """Whether ``body`` is an object written with JSON's optional spaces (``json.dumps``'
    default, pretty-printing), told by its first bytes and first key: then nothing in it
    stands as the compact bytes the store keeps, and looking for them would scan the whole
    body for nothing (0.5 ms at 1 MB). A wrong guess costs a cache hit, never a byte."""
    if body[:1] != b"{":
        return False
    if body[1:2] in _BLANKS:
        return True
    colon = body.find(b'":', 2, 256)  # the first key's end, unless escaped (then: unsure)
    return colon > 0 and body[colon - 1] != _BACKSLASH and body[colon + 2 : colon + 3] in _BLANKS


class _Context(NamedTuple):
    """What a stored rewrite depended on besides its bytes and the rules."""

    history: Hashable
    """``Rewriter.history_key()``: what the message walk reads from the request."""


class Splice:
    """One request through the cache: cut, parse, rewrite the rest, splice, store."""

    def __init__(self, rt: Runtime, store: MessageCache, body: bytes, messages: bool) -> None:
        self.rt, self.store, self.body = rt, store, body
        self.spaced = spaced(body)  # then the store can hold none of it: do not look
        self.messages_on = messages and not self.spaced  # a body under min_body: not either
        self.loads, self.dumps = jsonio.loads, jsonio.dumps
        self.matched: list[Entry] = []
        self.parts: list[bytes] = []
        self.drafts: list[Draft] = []
        self.reused = 0
        self.start = self.rest = -1
        self.whole = True
        self.cut = b""
        self.pos = -1  # where the first message not yet served stands (-1: store nothing)
        self.tools_hit: ToolsEntry | None = None
        self.payload: dict[str, Any] = {}

    def run(
        self, model: str | None, env: Mapping[str, str] | None
    ) -> tuple[OutboundResult, bytes] | None:
        """The rewritten request and its bytes; None: start again with the whole body, plainly
        (the body is not an object, or it holds the marker itself)."""
        payload = self._parse()
        if type(payload) is not dict:
            return None
        self.payload = payload
        result = rewrite_with(self.rt, payload, model, env, self._messages, tools_step=self._tools)
        if not result.gate_open and self.matched:
            self.parts = [self._as_sent(entry) for entry in self.matched]
        out = self.dumps(result.payload)
        if self.parts:
            at = out.find(_MARK_JSON)
            if at < 0 or out.find(_MARK_JSON, at + 1) >= 0:
                return None  # the body holds the marker itself: start again, plainly
            view = memoryview(out)
            pieces: list[bytes | memoryview] = [view[:at]]
            for part in self.parts:
                pieces += (part, b",")
            pieces[-1] = view[at + len(_MARK_JSON) :]
            out = b"".join(pieces)
        if result.gate_open and (self.matched or self.drafts):
            self.store.commit(self.matched, self.drafts)
        return result, out

    def _as_sent(self, entry: Entry) -> bytes:
        """A stored run re-serialised unchanged (a closed gate): its own bytes, which are
        their compact form (only such runs are stored)."""
        self.reused += entry.count
        return entry.raw

    def prepare(self) -> int:
        """Cut out the messages and the tools the store holds; how many bytes are left to parse."""
        body = self.body
        cuts: list[tuple[int, int, bytes]] = []  # (from, to, what stands in)
        start = body.find(_KEY) if self.messages_on else -1
        if start >= 0:
            start += len(_KEY)
            matched, rest = self.store.match(body, start)
            self.start = start
            if matched and rest < len(body):
                self.matched, self.rest = matched, rest
                sep = b"," if body[rest - 1] == _COMMA else b""  # keep what followed the cut
                cuts.append((start, rest, _MARK_JSON + sep))
        self._cut_tools(cuts)
        self.whole = not cuts
        if self.whole:
            return len(body)
        view = memoryview(body)
        pieces: list[bytes | memoryview] = []
        done = 0
        for begin, end, mark in sorted(cuts):
            pieces += (view[done:begin], mark)
            done = end
        pieces.append(view[done:])
        self.cut = b"".join(pieces)
        return len(self.cut)

    def _cut_tools(self, cuts: list[tuple[int, int, bytes]]) -> None:
        """The cut of a tools array the memo holds, where it stood in an earlier body."""
        if self.spaced or not self.store.tools:
            return
        found = self.store.tools.find(self.body, _TOOLS_KEY, _CODEC)
        if found is None:
            return
        entry, begin = found
        if any(start <= begin < end for start, end, _mark in cuts):
            return  # inside the messages already cut out
        self.tools_hit = entry
        cuts.append((begin, begin + len(entry.raw), _TOOLS_MARK_JSON))

    def _parse(self) -> Any:
        """The body with what the store holds cut out (or whole, when it holds none of it)."""
        body = self.body
        payload = None
        if not self.whole:
            try:
                cut = self.loads(self.cut)
            except ValueError:
                cut = None
            if type(cut) is dict and self._cut_holds(cut):
                payload = cut
        if payload is None:
            self.matched, self.tools_hit = [], None
            payload = self.loads(body)
        if self.matched:
            self.pos = self.rest
        elif self.start >= 0 and self.store.seen_before(body[self.start : self.start + _OPENING]):
            self.pos = self.start
        return payload

    def _cut_holds(self, cut: dict[str, Any]) -> bool:
        """Whether each marker parsed where it must (else something else was cut: start
        again with the whole body); the stored tools take their marker's place."""
        if self.matched:
            messages = cut.get("messages")
            if not (type(messages) is list and messages and messages[0] == _MARK):
                return False
        hit = self.tools_hit
        if hit is not None:
            if cut.get("tools") != _TOOLS_MARK:
                return False
            cut["tools"] = hit.value
        return True

    def _tools(self, rt: Runtime, tools: list[Any]) -> ToolsOutcome:
        """The tools step: what the memo holds for these tools, or a fresh outcome, kept
        when the array stands in the body as its compact bytes."""
        hit = self.tools_hit
        if hit is not None and tools is hit.value:
            outcome: ToolsOutcome = hit.outcome
            return outcome
        done = tools_outcome(rt, tools)
        if self.spaced:
            return done
        body, key = self.body, _TOOLS_KEY + b"["
        # Scan only the body's side the tools stand on, as the parse found the keys' order:
        # from the end when they follow the messages (as pi and opencode send them).
        keys = list(self.payload)
        after = "messages" in keys and keys.index("tools") > keys.index("messages")
        at = body.rfind(key) if after else body.find(key)
        if at < 0:  # not written compactly: no bytes of it can ever be matched
            return done
        try:
            raw = self.dumps(tools)
        except (TypeError, ValueError):  # orjson refuses it (a big integer, the depth)
            return done
        begin = at + len(_TOOLS_KEY)
        if body.startswith(raw, begin):
            self.store.tools.add(ToolsEntry(raw, tools, done, _CODEC, begin, len(body) - begin))
        return done

    def _messages(self, rw: Rewriter, messages: list[Any]) -> list[Any] | None:
        """The cache's ``messages`` step: stored outputs first, then the new messages."""
        if not self.matched and self.pos < 0:  # nothing cached, nothing to store
            return rw.messages(messages)
        context = _Context(rw.history_key())
        parts = self.parts
        for entry in self.matched:
            if entry.context == context:
                parts.append(entry.out)
                rw.add_renames(entry.renames)
                self.reused += entry.count
            else:  # other typed tools, tool search or codec: these may come out differently
                run = self.loads(b"[" + entry.raw + b"]")
                new_run, _own = rw.run_alone(run)
                parts.append(self.dumps(run if new_run is None else new_run)[1:-1])
        rest = messages[1:] if self.matched else messages
        stored = self._store_new(rw, rest, context)
        tail = rest[stored:]
        new_tail = rw.messages(tail)
        if not parts:
            return new_tail
        return [_MARK, *(tail if new_tail is None else new_tail)]

    def _store_new(self, rw: Rewriter, messages: list[Any], context: Hashable) -> int:
        """Rewrite and keep the new messages that stand as their compact bytes; count them.

        All but the last few go as one run (one ``dumps`` of the run checks its
        bytes, and serialises it); the last few go one by one, because the next
        request changes them (agents move ``cache_control`` to the newest message).
        """
        if self.pos < 0:
            return 0
        split = len(messages) - _ONE_BY_ONE
        if split > 1:
            runs = [messages[:split], *([m] for m in messages[split:])]
        else:
            runs = [[m] for m in messages]
        stored = 0
        for run in runs:
            try:
                raw = self.dumps(run)[1:-1]
            except (TypeError, ValueError):  # orjson refuses it (a big integer, the depth)
                break
            if not self._stands(raw):
                break
            refusals = rw.seal_refusals()
            new_run, own = rw.run_alone(run)
            if rw.seal_refusals() != refusals:
                break  # a seal on a call it was not made for: later results depend on it
            out = raw if new_run is None else self.dumps(new_run)[1:-1]
            self.drafts.append(Draft(raw, out, own, context, len(run)))
            self.parts.append(out)
            self.pos += len(raw) + 1
            stored += len(run)
        return stored

    def _stands(self, raw: bytes) -> bool:
        """Whether ``raw`` stands at ``pos`` as whole array elements."""
        body, pos = self.body, self.pos
        end = pos + len(raw)
        return end < len(body) and body[end] in (_COMMA, _CLOSE) and body.startswith(raw, pos)
