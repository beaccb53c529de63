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

from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from bridge_rules import jsonio
from bridge_rules.runtime import Runtime
from bridge_rules.schemas.book import Shapes
from bridge_rules.transform.cached import OutboundBytes, rewrite_outbound_bytes
from bridge_rules.transform.inbound import rewrite_message
from bridge_rules.transform.model_fit import MARK, Fitted, fit
from bridge_rules.transform.model_marks import mark_message, mark_stream, mark_stream_async
from bridge_rules.transform.report import InboundReport
from bridge_rules.transform.results import seals
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


def start_turn(
    rt: Runtime,
    body: bytes,
    model: str | None = None,
    env: Mapping[str, str] | None = None,
    *,
    cache: bool = True,
    gc_pause: bool | None = None,
) -> Turn:
    """Rewrite ``body`` for the wire and get ready for its answer. Raises
    ``jsonio.JSONDecodeError`` when the body is not JSON."""
    fitted, marks, body = fit_body(rt, body, model)
    outcome = rewrite_outbound_bytes(rt, body, model, env, cache=cache, gc_pause=gc_pause)
    if fitted is not None and fitted.rejected is not None and outcome.rejected is None:
        outcome.rejected = fitted.rejected
    if not outcome.gate_open and not outcome.policed:
        outcome.body = body
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


def fit_body(
    rt: Runtime, body: bytes, model: str | None
) -> tuple[Fitted | None, str | None, bytes]:
    """``body`` made acceptable to its model (``models:``): what changed (None: nothing),
    the model to mark the answer's thinking with, and the body to rewrite further. Parses
    only when a ``models:`` entry could change something or the body carries a mark."""
    table = rt.rules.models
    if not table.active and MARK.encode() not in body:
        return None, None, body
    payload = jsonio.loads(body)
    done = fit(table, payload, model, rt.outbound_name)
    asked = model if model is not None else _model_of(payload)
    foreign = table.decide(asked)["thinking.foreign"] if table.marks and asked else None
    marks = asked if foreign is not None and foreign.setting is not None else None
    if not isinstance(payload, dict):
        return None, marks, body
    same = set(done.payload) == set(payload)
    if same and done.rejected is None and all(v is payload.get(k) for k, v in done.payload.items()):
        return None, marks, body
    return done, marks, jsonio.dumps(done.payload)


def _model_of(payload: object) -> str | None:
    said = payload.get("model") if isinstance(payload, dict) else None
    return said if isinstance(said, str) else None
