"""Request bytes in, rewritten request bytes out, reusing the messages earlier requests sent.

The result is byte for byte what ``orjson.dumps(rewrite_outbound(rt,
orjson.loads(body)).payload)`` gives; only the work differs. The messages at
the head of the ``messages`` array that the runtime's
:class:`~bridge_rules.msgcache.MessageCache` already holds are found by their
bytes and cut out before parsing, so only the rest of the request (its new
messages, tools and system prompt) is parsed, rewritten and serialised; the
stored output of each cut message is spliced back in its place.

Why the splice is exact:

* An entry is used only where its exact bytes stand, and a stored ``out`` is
  what rewriting ``loads(raw)`` produced under the same rules (the store lives
  on the runtime), the same typed tools and the same codec (checked per entry,
  rewritten again on a mismatch). orjson serialises an element the same
  wherever it stands.
* The cut is replaced by a marker string holding a per-process random token,
  and the separator that followed the cut stays, so the rest parses exactly
  when the whole body would. The parse must put that marker first in the
  top-level ``messages`` array, or the cut is abandoned and the whole body
  parsed: so a ``"messages":[`` inside some other value is never mistaken for
  the array. The serialised output must hold the marker exactly once; it is
  replaced by the stored messages, comma-separated.
* Only messages whose bytes are orjson's compact form of themselves (what
  ``JSON.stringify`` writes) are stored; others are rewritten every time.

Rewriting a message needs nothing from the rest of its request except the
typed tools it names, so the renames a message brings are stored with it and
replayed in the order the plain walk would add them.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import orjson

from bridge_rules.gcpause import pause_enabled, paused
from bridge_rules.msgcache import Draft, Entry, MessageCache
from bridge_rules.runtime import Runtime
from bridge_rules.transform.outbound import (
    OutboundResult,
    Outcome,
    Rewriter,
    rewrite_outbound,
    rewrite_with,
)
from bridge_rules.transform.results import CallMemory, apply_results

_KEY = b'"messages":['
_MARK = "\x00bridge-rules cut " + secrets.token_hex(16)
_MARK_JSON = orjson.dumps(_MARK)
_COMMA, _CLOSE = ord(","), ord("]")
_ONE_BY_ONE = 4
"""The newest messages of a request are stored one by one, the older ones as one run."""
_PAUSE_FROM = 256 * 1024
"""Less to parse than this (a small body, or the new part of a known conversation) makes
too few objects for the collector to matter: no pause."""
_OPENING = 128
"""Bytes of the messages array that say "the same conversation as before" (``seen_before``)."""


@dataclass
class OutboundBytes(Outcome):
    """A rewritten request body, serialised, and its outcome (as on ``OutboundResult``).

    ``fields`` are the request's top-level fields other than ``messages`` (model,
    stream, ...), as parsed; ``reused`` and ``stored`` count the messages served
    from and added to the cache.
    """

    body: bytes
    fields: dict[str, Any] = field(default_factory=dict)
    reused: int = 0
    stored: int = 0


Loads = Callable[[bytes], Any]
Dumps = Callable[[Any], bytes]


def rewrite_outbound_bytes(
    rt: Runtime,
    body: bytes,
    model: str | None = None,
    env: Mapping[str, str] | None = None,
    *,
    cache: bool = True,
    gc_pause: bool | None = None,
    loads: Loads = orjson.loads,
    dumps: Dumps = orjson.dumps,
    memory: CallMemory | None = None,
) -> OutboundBytes:
    """Parse, rewrite and serialise one request body, through the message cache.

    ``memory``: the calls whose repair stripped a pipeline (``Engine.memory``); their
    ``tool_result`` blocks are rewritten from it, which the cache cannot see, so the
    whole body takes the plain path.

    ``cache=False`` (or the cache switched off on the runtime, or a body under
    its ``min_body``) takes the plain path. ``gc_pause`` keeps the cyclic
    collector off meanwhile (None: when 256 KB or more are left to parse after the
    cache's cut, unless ``BRIDGE_RULES_GC_PAUSE=0``; see
    :mod:`bridge_rules.gcpause`). Raises
    ``orjson.JSONDecodeError`` (a ``ValueError``) exactly when ``orjson.loads(body)`` would.

    ``loads``/``dumps`` replace orjson's (e.g. a codec exact for big integers,
    as the proxy's); ``dumps`` must write orjson's compact form where orjson can,
    since stored messages are compared with the body's bytes.
    """
    json = _Json(loads, dumps)
    store = rt.message_cache
    if cache and memory is None and store.enabled and len(body) >= store.min_body:
        job = _Cached(rt, store, body, json)
        with paused(_pause(gc_pause, job.prepare())):
            done = job.run(model, env)
        if done is not None:
            return done
    with paused(_pause(gc_pause, len(body))):
        payload = json.loads(body)
        if memory is not None:
            payload = apply_results(payload, memory)
        return _plain(rt, payload, model, env, json)


def _pause(asked: bool | None, to_parse: int) -> bool:
    """Pause the collector when parsing makes enough objects for it to matter (or as asked)."""
    if asked is not None:
        return asked
    return to_parse >= _PAUSE_FROM and pause_enabled()


class _Json(NamedTuple):
    loads: Loads
    dumps: Dumps


class _Context(NamedTuple):
    """What a stored rewrite depended on besides its bytes and the rules."""

    typed: frozenset[str]
    json: _Json


def _plain(
    rt: Runtime, payload: Any, model: str | None, env: Mapping[str, str] | None, json: _Json
) -> OutboundBytes:
    result = rewrite_outbound(rt, payload, model, env)
    return _finish(result, json.dumps(result.payload), payload)


def _finish(result: OutboundResult, body: bytes, payload: Any, **counts: int) -> OutboundBytes:
    fields = {k: v for k, v in payload.items() if k != "messages"} if type(payload) is dict else {}
    return OutboundBytes(
        body,
        renames=result.renames,
        gate_open=result.gate_open,
        registered=result.registered,
        dropped=result.dropped,
        gate_reason=result.gate_reason,
        rejected=result.rejected,
        fields=fields,
        **counts,
    )


class _Cached:
    """One request through the cache: cut, parse, rewrite the rest, splice, store."""

    def __init__(self, rt: Runtime, store: MessageCache, body: bytes, json: _Json) -> None:
        self.rt, self.store, self.body = rt, store, body
        self.json = json
        self.loads, self.dumps = json
        self.matched: list[Entry] = []
        self.parts: list[bytes] = []
        self.drafts: list[Draft] = []
        self.reused = 0
        self.start = self.rest = -1
        self.whole = True
        self.cut = b""
        self.pos = -1  # where the first message not yet served stands (-1: store nothing)

    def run(self, model: str | None, env: Mapping[str, str] | None) -> OutboundBytes | None:
        payload = self._parse()
        if type(payload) is not dict:
            return _plain(self.rt, payload, model, env, _Json(self.loads, self.dumps))
        result = rewrite_with(self.rt, payload, model, env, self._messages)
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
        if result.gate_open:
            self.store.commit(self.matched, self.drafts)
        return _finish(
            result,
            out,
            payload,
            reused=self.reused,
            stored=sum(d.count for d in self.drafts),
        )

    def _as_sent(self, entry: Entry) -> bytes:
        """A stored run re-serialised unchanged (a closed gate): its own bytes, if this codec
        stored them (they are then its compact form), else a fresh round trip."""
        context = entry.context
        if isinstance(context, _Context) and context.json == self.json:
            self.reused += entry.count
            return entry.raw
        return self.dumps(self.loads(b"[" + entry.raw + b"]"))[1:-1]

    def prepare(self) -> int:
        """Cut out the messages the cache holds; how many bytes are left to parse."""
        body = self.body
        start = body.find(_KEY)
        self.whole = True
        if start < 0:
            return len(body)
        start += len(_KEY)
        matched, rest = self.store.match(body, start)
        self.start, self.matched, self.rest = start, matched, rest
        if matched and rest < len(body):
            view = memoryview(body)
            sep = b"," if body[rest - 1] == _COMMA else b""  # keep what followed the cut
            self.cut = b"".join((view[:start], _MARK_JSON, sep, view[rest:]))
            self.whole = False
            return len(self.cut)
        return len(body)

    def _parse(self) -> Any:
        """The body with the messages the cache holds cut out (or whole, when none are)."""
        body = self.body
        if not self.whole:
            try:
                cut = self.loads(self.cut)
            except ValueError:
                cut = None
            if type(cut) is dict:
                messages = cut.get("messages")
                if type(messages) is list and messages and messages[0] == _MARK:
                    self.pos = self.rest
                    return cut
        self.matched = []
        if self.start >= 0 and self.store.seen_before(body[self.start : self.start + _OPENING]):
            self.pos = self.start
        return self.loads(body)

    def _messages(self, rw: Rewriter, messages: list[Any]) -> list[Any] | None:
        """The cache's ``messages`` step: stored outputs first, then the new messages."""
        if not self.matched and self.pos < 0:  # nothing cached, nothing to store
            return rw.messages(messages)
        context = _Context(frozenset(rw.typed), self.json)
        parts = self.parts
        for entry in self.matched:
            if entry.context == context:
                parts.append(entry.out)
                rw.add_renames(entry.renames)
                self.reused += entry.count
            else:  # other typed tools (or codec) since: these may come out differently now
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
            new_run, own = rw.run_alone(run)
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


__all__ = ["OutboundBytes", "rewrite_outbound_bytes"]
