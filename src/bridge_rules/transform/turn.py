"""One request through the rules and its answer back: everything a request owns.

A :class:`Turn` is made per request (:meth:`bridge_rules.Engine.turn`) and holds what
the way back needs of the way out: the local names of the tools the request sent (the
reverse map is scoped to them), the seals that give a repaired call an id carrying what
was changed, and the report of names mapped back. Nothing here outlives the request,
and nothing is shared between requests except the immutable
:class:`~bridge_rules.runtime.Runtime` and its byte-exact caches. The proxy and library
callers use the same object.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from bridge_rules import jsonio
from bridge_rules.gcpause import pause_enabled, paused
from bridge_rules.modelrules import ModelTable
from bridge_rules.runtime import Runtime
from bridge_rules.schemas.book import Shapes
from bridge_rules.transform.cached import OutboundBytes, rewrite_outbound_bytes
from bridge_rules.transform.inbound import rewrite_message
from bridge_rules.transform.model_fit import MARK, Fitted, fit
from bridge_rules.transform.model_marks import mark_message, mark_stream, mark_stream_async
from bridge_rules.transform.outbound import OutboundResult, rewrite_outbound
from bridge_rules.transform.report import InboundReport
from bridge_rules.transform.results import seals
from bridge_rules.transform.rewriter import Rewriter
from bridge_rules.transform.scope import CallScope
from bridge_rules.transform.stream import rewrite_stream, rewrite_stream_async


@dataclass(eq=False)
class Turn:
    """A rewritten request (:attr:`outcome`) and the rewriting of its response."""

    outcome: OutboundBytes
    scope: CallScope
    """What mapping the answer's calls back needs of this request; its report is filled
    by :meth:`message` and the streams."""
    fitted: Fitted | None = None
    """What ``models:`` changed in the request (None: nothing to fit)."""
    marks: str | None = None
    """The model the answer's thinking blocks are marked with when it names none (None:
    not marked; see :mod:`bridge_rules.transform.model_fit`)."""

    @property
    def runtime(self) -> Runtime:
        return self.scope.rt

    @property
    def report(self) -> InboundReport:
        """Names mapped back, and the unmapped and denied calls of the answer so far."""
        assert self.scope.report is not None  # start_turn gives every turn one
        return self.scope.report

    @property
    def body(self) -> bytes:
        """What goes upstream: the rewritten body, or the client's own when the gate is shut
        (less what the policy denies, if anything)."""
        return self.outcome.body

    @property
    def registered(self) -> tuple[str, ...]:
        """The local names of the tools this request sent (what the way back is scoped to)."""
        assert self.scope.registered is not None  # start_turn scopes every turn to them
        return self.scope.registered

    @property
    def shapes(self) -> Shapes:
        """How calls to this request's tools cross their schema conversion."""
        return self.outcome.shapes

    @property
    def gate_open(self) -> bool:
        return self.outcome.gate_open

    @property
    def guards(self) -> bool:
        """Whether the answer must go through this turn: the gate is open (names come
        back), or a policy judges the calls even though it is shut."""
        return (
            self.outcome.gate_open
            or self.scope.rt.policy.active
            or self.fitted is not None
            or self.marks is not None
        )

    @property
    def rejected(self) -> str | None:
        return self.outcome.rejected

    def message(self, message: Any) -> Any:
        """A non-streaming response message in local terms (a new dict)."""
        out = rewrite_message(self.scope, message)
        return out if self.marks is None else mark_message(out, self.marks)

    def stream(self, chunks: Iterable[bytes]) -> Iterator[bytes]:
        """An SSE response rewritten chunk by chunk; any chunking works."""
        out = rewrite_stream(self.scope, chunks)
        return out if self.marks is None else mark_stream(out, self.marks)

    def stream_async(self, chunks: AsyncIterable[bytes]) -> AsyncIterator[bytes]:
        """:meth:`stream` over an async iterable (an ASGI or aiohttp body)."""
        out = rewrite_stream_async(self.scope, chunks)
        return out if self.marks is None else mark_stream_async(out, self.marks)


Request = tuple[OutboundBytes, Fitted | None, str | None]
"""A turn's request half (:func:`rewrite_turn`): the body rewritten, the fit, and the model
the answer is marked with."""


def start_turn(rt: Runtime, request: Request) -> Turn:
    """A turn whose request :func:`rewrite_turn` made, ready for its answer."""
    outcome, fitted, marks = request
    scope = CallScope(
        rt,
        tuple(outcome.registered),
        seals(rt),
        InboundReport(),
        outcome.shapes,
        mapping=outcome.gate_open,
        sent=(*outcome.registered, *outcome.dropped),
    )
    return Turn(outcome, scope, fitted, marks)


def rewrite_turn(
    rt: Runtime, body: bytes, model: str | None, env: Mapping[str, str] | None, cache: bool
) -> Request:
    """Rewrite ``body`` for the wire: the request half of a turn. ``Engine.outbound_bytes``
    stops here, without the answer's scope (issue 36: a replayed turn's fixed cost).
    Raises ``jsonio.JSONDecodeError`` when the body is not JSON."""
    outcome = None
    if rt.rules.models.active and not _may_hold_mark(body):
        # Issue 36: fit() would parse and walk the whole body only to find, most of the
        # time, nothing to change. The rewrite parses the top-level fields anyway; from
        # them, whether fit() would have changed anything is known, and only then is the
        # request fitted and rewritten again (the cache is exact, so the bytes are alike).
        outcome = rewrite_outbound_bytes(rt, body, model, env, cache=cache)
        fitted: Fitted | None = None
        refit, marks = _unfitted(rt.rules.models, model, outcome.fields)
        if refit:
            outcome = None
    if outcome is None:
        fitted, marks, body = fit_body(rt, body, model)
        outcome = rewrite_outbound_bytes(rt, body, model, env, cache=cache)
    if fitted is not None and fitted.rejected is not None and outcome.rejected is None:
        outcome.rejected = fitted.rejected
    if not outcome.gate_open and not outcome.policed:
        outcome.body = body
    return outcome, fitted, marks


def outbound_fitted(
    rt: Runtime, payload: Any, model: str | None, env: Mapping[str, str] | None
) -> OutboundResult:
    """``payload`` fitted to its model (``models:``) and rewritten: what
    :meth:`bridge_rules.Engine.outbound` returns.

    The fit walks every message; most of the time it finds nothing to change. When the
    top-level fields and the model's decisions say only a marked thinking block could
    change (:func:`_unfitted`), the rewrite runs first, its own walk notes whether it passed
    one, and only then is the request fitted and rewritten again (issue 36: the walk of a
    long history once, not twice). The collector is paused over a long history's walk, as
    :mod:`bridge_rules.gcpause` says why."""
    history = payload.get("messages") if isinstance(payload, dict) else None
    long = isinstance(history, list) and len(history) >= _PAUSE_MESSAGES
    with paused(long and pause_enabled()):
        return _outbound_fitted(rt, payload, model, env)


_PAUSE_MESSAGES = 256
"""Messages from which ``Engine.outbound`` pauses the collector (a pi history of 256
messages is ~230 KB: near :data:`~bridge_rules.gcpause.PAUSE_FROM`)."""


def _outbound_fitted(
    rt: Runtime, payload: Any, model: str | None, env: Mapping[str, str] | None
) -> OutboundResult:
    table = rt.rules.models
    if isinstance(payload, dict) and not _unfitted(table, model, payload)[0]:
        walks: list[Rewriter] = []

        def messages(rw: Rewriter, messages: list[Any]) -> list[Any] | None:
            walks.append(rw)
            return rw.messages(messages)

        result = rewrite_outbound(rt, payload, model, env, messages_step=messages)
        if result.gate_open and not any(rw.marked for rw in walks):
            return result
    fitted = fit(table, payload, model, rt.outbound_name)
    result = rewrite_outbound(rt, fitted.payload, model, env)
    if fitted.rejected is not None and result.rejected is None:
        result.rejected = fitted.rejected
    return result


def fit_body(
    rt: Runtime, body: bytes, model: str | None
) -> tuple[Fitted | None, str | None, bytes]:
    """``body`` made acceptable to its model (``models:``): what changed (None: nothing),
    the model to mark the answer's thinking with, and the body to rewrite further. Parses
    only when a ``models:`` entry could change something or the body carries a mark."""
    table = rt.rules.models
    if not table.active and _MARK_BYTES not in body:
        return None, None, body
    payload = jsonio.loads(body)
    done = fit(table, payload, model, rt.outbound_name)
    marks = _marks(table, model if model is not None else _model_of(payload))
    if not isinstance(payload, dict):
        return None, marks, body
    same = set(done.payload) == set(payload)
    if same and done.rejected is None and all(v is payload.get(k) for k, v in done.payload.items()):
        return None, marks, body
    return done, marks, jsonio.dumps(done.payload)


_MARK_BYTES = MARK.encode()
_ESCAPED = re.compile(rb"\\u00(?:62|72|6[dD]|31|7[eE])")
"""A ``\\u`` escape of one of :data:`MARK`'s characters."""


def _may_hold_mark(body: bytes) -> bool:
    """Whether a string of the body may hold :data:`MARK`: written as it is, or with one of
    its characters as a ``\\u`` escape. False: no string holds it, nothing to unmark."""
    # One-byte searches first (memchr, ~50x faster than a search for the whole mark): a
    # body without a "~" or without a backslash cannot hold the mark that way.
    if b"~" in body and _MARK_BYTES in body:
        return True
    return b"\\" in body and _ESCAPED.search(body) is not None


def _marks(table: ModelTable, asked: str | None) -> str | None:
    """The model to mark the answer's thinking with (None: the answer is not marked)."""
    foreign = table.decide(asked)["thinking.foreign"] if table.marks and asked else None
    return asked if foreign is not None and foreign.setting is not None else None


def _unfitted(
    table: ModelTable, model: str | None, fields: dict[str, Any]
) -> tuple[bool, str | None]:
    """(refit, marks): whether fit() may change the request, and if not, the model to mark
    the answer with (what :func:`fit_body` gives). Holds for a body no string of which holds
    :data:`MARK`: then only the model's decisions act, each on what ``fields`` (the
    request's top-level fields) show, except a system message or an unmarked thinking block,
    which only the messages would show (so those decisions refit whenever they act)."""
    asked = model if model is not None else _model_of(fields)
    decisions = table.decide(asked)
    choice, thinking = fields.get("tool_choice"), fields.get("thinking")
    if (
        decisions["system_in_messages"].value != "keep"
        or decisions["thinking.unknown"].value == "strip"
        or (
            decisions["tool_choice.forced"].value != "keep"
            and isinstance(choice, dict)
            and choice.get("type") in ("any", "tool")
        )
        or (
            decisions["thinking.disabled"].value != "keep"
            and isinstance(thinking, dict)
            and thinking.get("type") == "disabled"
        )
    ):
        return True, None
    return False, _marks(table, asked)


def _model_of(payload: object) -> str | None:
    said = payload.get("model") if isinstance(payload, dict) else None
    return said if isinstance(said, str) else None
