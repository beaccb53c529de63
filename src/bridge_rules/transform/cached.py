"""Request bytes in, rewritten request bytes out, reusing the messages earlier requests sent.

The result is byte for byte what ``jsonio.dumps(rewrite_outbound(rt,
jsonio.loads(body)).payload)`` gives (:mod:`bridge_rules.jsonio`, the one codec: exact
for integers of any size); only the work differs. The messages at
the head of the ``messages`` array that the runtime's
:class:`~bridge_rules.msgcache.MessageCache` already holds are found by their
bytes and cut out before parsing, so only the rest of the request (its new
messages, tools and system prompt) is parsed, rewritten and serialised; the
stored output of each cut message is spliced back in its place.

Why the splice is exact:

* An entry is used only where its exact bytes stand, and a stored ``out`` is
  what rewriting ``loads(raw)`` produced under the same rules (the store lives
  on the runtime) and the same key (checked per entry, rewritten again on a
  mismatch). The codec serialises an element the same wherever it stands.
* The cut is replaced by a marker string holding a per-process random token,
  and the separator that followed the cut stays, so the rest parses exactly
  when the whole body would. The parse must put that marker first in the
  top-level ``messages`` array, or the cut is abandoned and the whole body
  parsed: so a ``"messages":[`` inside some other value is never mistaken for
  the array. The serialised output must hold the marker exactly once; it is
  replaced by the stored messages, comma-separated.
* Only messages whose bytes are the codec's compact form of themselves (what
  ``JSON.stringify`` writes) are stored; others are rewritten every time.

Why a stored ``out`` is what the plain path would write for the message now:
both paths rewrite messages with one function,
:meth:`~bridge_rules.transform.rewriter.Rewriter.messages`, and after it
:func:`~bridge_rules.transform.outbound.rewrite_with` touches no message. That
walk reads, besides the message itself:

* the rules, through the runtime: ``outbound_name`` (the resolver, a function of
  the name) and the history plans (the wire name, and the binding's history
  operations and repair's scrubbing as compiled steps, functions of the
  arguments). The store lives on the runtime, so new rules start empty;
* from the rest of the request, only what its ``tools`` decided: which names are
  typed tools (kept under their reserved names) and whether tool search is in
  play (``tool_reference`` names renamed). Both are in the entry's key,
  ``Rewriter.history_key()``; an entry under another key is
  rewritten again. A new input of the walk goes into that key;
* the rewriter's ``renames``: a memo of ``outbound_name``, which changes no
  output. The renames a run brings on its own are stored with it and replayed
  in the order the plain walk would add them.

Nothing else reaches a message: the model and ``env`` only open or close the
gate (closed, nothing is rewritten and matched messages go out as they came);
text rules apply to ``system`` only; filters, ``tool_choice`` and the
``wire_names`` verdict act on ``tools`` and ``tool_choice``, never on history;
sealed ids are opened inside the walk, under the runtime's own key. One thing carries
from a message to the next: a genuine seal on a ``tool_use`` it was not made for keeps
the ``tool_result`` that answers it closed too (``transform.results``). A run where that
happens is never stored, so it and everything after it are walked, in order, every time.

The ``tools`` array goes the same way, whatever the body's size: what a request's
tools decide (:class:`~bridge_rules.transform.outbound_tools.ToolsOutcome`) depends on
them and the rules alone, so an array the store's
:class:`~bridge_rules.msgcache.ToolsMemo` holds is cut out before parsing (a
second marker, which must parse as the top-level ``tools``), and its stored
parsed value and outcome stand in for parsing, rewriting and checking it again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bridge_rules import jsonio
from bridge_rules.gcpause import pause_enabled, paused
from bridge_rules.runtime import Runtime
from bridge_rules.transform.outbound import OutboundResult, Outcome, rewrite_outbound
from bridge_rules.transform.splice import Splice

_PAUSE_FROM = 256 * 1024
"""Less to parse than this (a small body, or the new part of a known conversation) makes
too few objects for the collector to matter: no pause."""


@dataclass
class OutboundBytes(Outcome):
    """A rewritten request body, serialised, and its outcome (as on ``OutboundResult``).

    ``fields`` are the request's top-level fields other than ``messages`` (model,
    stream, ...), as parsed, and read-only (a remembered ``tools`` value is shared
    with later requests); ``reused`` and ``stored`` count the messages served
    from and added to the cache; ``tools_reused``: the ``tools`` came from the
    store's memo.
    """

    body: bytes
    fields: dict[str, Any] = field(default_factory=dict)
    reused: int = 0
    stored: int = 0
    tools_reused: bool = False


def rewrite_outbound_bytes(
    rt: Runtime,
    body: bytes,
    model: str | None = None,
    env: Mapping[str, str] | None = None,
    *,
    cache: bool = True,
    gc_pause: bool | None = None,
) -> OutboundBytes:
    """Parse, rewrite and serialise one request body, through the message cache.

    ``cache=False`` (or the cache switched off on the runtime) takes the plain
    path; a body under the cache's ``min_body`` only reuses its ``tools``.
    ``gc_pause`` keeps the cyclic collector off meanwhile (None: when 256 KB or
    more are left to parse after the cache's cut, unless
    ``BRIDGE_RULES_GC_PAUSE=0``; see :mod:`bridge_rules.gcpause`). Raises
    ``jsonio.JSONDecodeError`` (a ``ValueError``) exactly when ``jsonio.loads(body)`` would.
    """
    store = rt.message_cache
    if cache and store.enabled:
        job = Splice(rt, store, body, len(body) >= store.min_body)
        with paused(_pause(gc_pause, job.prepare())):
            done = job.run(model, env)
        if done is not None:
            result, out = done
            return _finish(
                result,
                out,
                job.payload,
                reused=job.reused,
                stored=sum(d.count for d in job.drafts),
                tools_reused=job.tools_hit is not None,
            )
    with paused(_pause(gc_pause, len(body))):
        payload = jsonio.loads(body)
        return _plain(rt, payload, model, env)


def _pause(asked: bool | None, to_parse: int) -> bool:
    """Pause the collector when parsing makes enough objects for it to matter (or as asked)."""
    if asked is not None:
        return asked
    return to_parse >= _PAUSE_FROM and pause_enabled()


def _plain(
    rt: Runtime, payload: Any, model: str | None, env: Mapping[str, str] | None
) -> OutboundBytes:
    result = rewrite_outbound(rt, payload, model, env, memo=False)
    return _finish(result, jsonio.dumps(result.payload), payload)


def _finish(
    result: OutboundResult,
    body: bytes,
    payload: Any,
    *,
    reused: int = 0,
    stored: int = 0,
    tools_reused: bool = False,
) -> OutboundBytes:
    fields = {k: v for k, v in payload.items() if k != "messages"} if type(payload) is dict else {}
    return OutboundBytes(
        body,
        renames=result.renames,
        gate_open=result.gate_open,
        registered=result.registered,
        dropped=result.dropped,
        gate_reason=result.gate_reason,
        rejected=result.rejected,
        shapes=result.shapes,
        policed=result.policed,
        fields=fields,
        reused=reused,
        stored=stored,
        tools_reused=tools_reused,
    )


__all__ = ["OutboundBytes", "rewrite_outbound_bytes"]
