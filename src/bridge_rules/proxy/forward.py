"""One request to the upstream and its answer back to the client.

Three ways back: untouched (gate closed, errors, other paths, count_tokens), a rewritten
SSE stream sent event by event as the rewriter yields it, or a rewritten JSON message with
a recomputed ``content-length`` (the upstream's own bytes when nothing in it changed).

An answer is rewritten only when it can be read: a status HTTP defines (else 502), every
content coding undone by ``proxy.coding`` (else it goes back untouched, its
``Content-Encoding`` kept), and a JSON answer no larger than ``max_response_bytes``
(else 502). ``text/event-stream`` is matched as a media type (any case, any parameters);
an answer with no ``Content-Type`` is taken for a stream when the request asked for one.
With a tool policy on, an answer the proxy cannot read is never passed on
(``proxy.strict``), whether or not the rules' gate rewrote the request.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import aiohttp

from bridge_rules import jsonio
from bridge_rules.debuglog import DebugLog
from bridge_rules.gcpause import paused_for
from bridge_rules.proxy import paths, tracing
from bridge_rules.proxy.coding import Decoder, Undecodable, codings, decodable, decoded
from bridge_rules.proxy.endpoints import ANSWER_REWRITTEN
from bridge_rules.proxy.errors import ProxyError, UpstreamAborted, sse_error_event
from bridge_rules.proxy.headers import (
    Raw,
    filter_headers,
    redact,
    redact_query,
    request_headers,
)
from bridge_rules.proxy.keys import CREDENTIAL_HEADERS
from bridge_rules.proxy.reply import Message, Reply
from bridge_rules.proxy.stream import EventTooLarge, StreamWatch, relay, too_large
from bridge_rules.proxy.strict import Unreadable, checked, read_message, refusal, without_bom
from bridge_rules.proxy.upstream import READ_ERRORS, Upstream, read_fault

REWRITE_DROP = frozenset({b"content-length", b"content-encoding"})
DEBUG_STREAM_CAP = 1 << 20  # bytes of a streamed body the debug log keeps (--log-prompts)
SSE = "text/event-stream"
NO_CONTENT = frozenset({204, 304})  # answers that never have a body (RFC 9110 6.4.1)

if TYPE_CHECKING:
    from bridge_rules.engine import Turn

log = logging.getLogger("bridge_rules.proxy")


@dataclass
class Exchange:
    """One request on its way through. ``body`` is what goes upstream: the client's bytes,
    or the rewritten request once :meth:`rewritten` has run (the parsed payload is not
    kept, so no large object graph lives across an ``await``)."""

    scope: Message
    body: bytes
    reply: Reply
    debug_log: DebugLog | None
    turn: Turn | None = None
    """Set when the rules rewrote the request: its answer is rewritten by the same turn."""
    debug: dict[str, Any] = field(default_factory=dict)
    switches: tuple[str, ...] = ()
    """Policy switches on for every request of the client's key (``serve --keys``), before
    those its ``x-bridge-rules-policy`` header asks for; they only narrow."""
    upstream_auth: Raw | None = None
    """With ``serve --keys``: the headers that replace the client's credentials upstream
    (the key's upstream credential, or none); None: the client's go as sent."""
    guarded: bool = False
    """A tool policy applies to the request (the rules', the route's or its header's):
    its answer is passed on only if read (``proxy.strict``)."""

    def rewritten(self, turn: Turn) -> None:
        """Take the outbound rewrite (called inside the rewrite's collector pause, if any):
        with the gate open, or with it shut when a policy judges the answer."""
        self.guarded = turn.runtime.policy.active
        if turn.guards:
            self.turn = turn
            self.body = turn.body

    def debug_record(self) -> dict[str, Any]:
        rec = self.reply.record
        return {
            **rec.to_dict(),
            "query": redact_query(self.scope.get("query_string", b"")),
            "request_headers": redact(self.scope["headers"]),
            **self.debug,
        }


async def forward(upstream: Upstream, ex: Exchange) -> None:
    turn = ex.turn
    messages = ex.scope["path"] in ANSWER_REWRITTEN
    guarded = ex.guarded and messages
    headers = request_headers(ex.scope["headers"], identity=turn is not None or guarded)
    if ex.upstream_auth is not None:
        headers = [h for h in headers if h[0] not in CREDENTIAL_HEADERS] + ex.upstream_auth
    record = ex.reply.record
    sent = time.perf_counter()
    with tracing.upstream_call(headers):  # its traceparent goes upstream
        response = await upstream.send(ex.scope, headers, ex.body)
    try:
        with tracing.child("bridge_rules.way_back"):
            record.upstream_ms = round((time.perf_counter() - sent) * 1000, 3)
            record.upstream_status = response.status
            if ex.debug_log is not None:
                ex.debug["response_headers"] = redact(response.raw_headers)
            if not 200 <= response.status <= 599:  # 1xx are read by aiohttp; a final one is not
                raise ProxyError(
                    502,
                    f"the upstream answered with status {response.status}, which is not a final "
                    "HTTP status (200-599, RFC 9110 15)",
                )
            if ex.scope["path"] == paths.COUNT_TOKENS and response.status in paths.NO_COUNTING:
                raise ProxyError(404, paths.NOT_COUNTED)
            applied = codings(response.headers.get("content-encoding"))
            is_sse = _is_sse(response.headers.get("content-type"), record.stream is True)
            bodied = response.status not in NO_CONTENT and ex.scope["method"] != "HEAD"
            if guarded and bodied and response.status < 400:
                content_type = response.headers.get("content-type")
                refused = refusal(response.status, applied, content_type, is_sse)
                if refused is not None:
                    raise ProxyError(502, refused)
            if turn is not None and messages and response.status < 400 and not decodable(applied):
                log.warning(
                    "not rewriting the answer on %s: the upstream encoded it with %s, which "
                    "bridge-rules cannot decode; it goes to the client as sent",
                    record.path,
                    ", ".join(applied),
                )
                turn = None
            if not bodied:
                is_sse, turn, guarded = False, None, False  # no body to rewrite or add to
            if (turn is None and not guarded) or response.status >= 400 or not messages:
                await _untouched(upstream, ex, response, is_sse and messages, bool(applied))
            elif is_sse:
                await _stream(upstream, turn, ex, response, applied, guarded=guarded)
            else:
                await _message(upstream, turn, ex, response, applied, guarded=guarded)
    finally:
        response.close()


def _is_sse(content_type: str | None, asked: bool) -> bool:
    """Whether the answer is an SSE stream: its media type, compared without case or
    parameters (RFC 9110 8.3.1); with no ``Content-Type`` at all, whether one was asked for."""
    if content_type is None:
        return asked
    return content_type.split(";", 1)[0].strip().lower() == SSE


async def _send_stream(
    ex: Exchange, chunks: AsyncIterator[bytes], timeout: float, watch: StreamWatch | None
) -> None:
    """Send ``chunks`` as they come; a fault becomes an SSE ``error`` event when the body
    is a plain SSE stream (its events seen by ``watch``), else the connection is closed (a
    truncated body, never a silently complete one). The client gets at most one error
    event."""
    can_tell = watch is not None
    keep = ex.debug_log is not None and ex.debug_log.log_prompts
    kept: list[bytes] = []
    fault: str | None = None
    try:
        async for chunk in chunks:
            await ex.reply.chunk(chunk)
            if keep and ex.reply.record.bytes_out <= DEBUG_STREAM_CAP:
                kept.append(chunk)
    except READ_ERRORS as exc:
        fault, ex.reply.record.error = read_fault(exc, timeout), "upstream_stream_error"
    except EventTooLarge as exc:
        fault, ex.reply.record.error = too_large(exc), "sse_event_too_large"
    except Undecodable as exc:
        fault, ex.reply.record.error = str(exc), "upstream_undecodable"
    except Unreadable as exc:  # nothing of the unread event went out: always say why
        ex.reply.record.error = "upstream_unreadable"
        await ex.reply.chunk(sse_error_event(str(exc)))
    else:
        if watch is not None and not watch.finished:
            fault = "the upstream ended the stream before message_stop"
            ex.reply.record.error = "upstream_stream_incomplete"
    finally:
        if kept:
            ex.debug["response_stream"] = b"".join(kept).decode("utf-8", "replace")
    if fault is not None and watch is not None and not watch.finished:
        await ex.reply.chunk(sse_error_event(fault))
    elif fault is not None and not can_tell:
        raise UpstreamAborted(fault)
    await ex.reply.finish()


async def _untouched(
    upstream: Upstream, ex: Exchange, response: aiohttp.ClientResponse, sse: bool, encoded: bool
) -> None:
    await ex.reply.start(response.status, filter_headers(response.raw_headers, frozenset()))
    chunks: AsyncIterator[bytes] = response.content.iter_any()
    watch = None
    if sse and not encoded and response.status < 400:
        watch = StreamWatch()
        chunks = relay(chunks, upstream.config.max_sse_event_bytes, watch, untouched=True)
    await _send_stream(ex, chunks, upstream.config.timeout, watch)


async def _stream(
    upstream: Upstream,
    turn: Turn | None,
    ex: Exchange,
    response: aiohttp.ClientResponse,
    applied: list[str],
    *,
    guarded: bool,
) -> None:
    """The stream rewritten by ``turn``; ``guarded``: each event read first, and a
    stream it cannot read ended with an error event (``proxy.strict``)."""
    await ex.reply.start(response.status, filter_headers(response.raw_headers, REWRITE_DROP))
    cap = upstream.config.max_sse_event_bytes
    body: AsyncIterator[bytes] = response.content.iter_any()
    if applied:
        body = decoded(body, Decoder(applied), cap)
    watch = StreamWatch()
    chunks = relay(without_bom(body) if guarded else body, cap, watch)
    if guarded:
        chunks = checked(chunks)
    if turn is not None:
        chunks = turn.stream_async(chunks)
    try:
        await _send_stream(ex, chunks, upstream.config.timeout, watch)
    finally:
        if turn is not None:
            ex.reply.record.noted(turn.report)


def _same(rewritten: Any, message: dict[str, Any]) -> bool:
    """Whether the rewrite left the message as it was: the same fields, each the very object
    parsed (the rewrite copies on change, so an equal value is not enough: an adapter may
    turn ``1`` into ``true``, which Python calls equal)."""
    if rewritten is message:
        return True
    if type(rewritten) is not dict or len(rewritten) != len(message):
        return False
    return all(k in rewritten and rewritten[k] is v for k, v in message.items())


async def _read_capped(
    response: aiohttp.ClientResponse, applied: list[str], cap: int, timeout: float
) -> bytes:
    """The whole answer, decoded; 502 once it is (or says it will be) over ``cap`` bytes,
    so an answer the proxy must parse never takes more than that of a worker's memory."""

    def too_big(size: int) -> ProxyError:
        return ProxyError(
            502,
            f"the upstream's answer is over {cap} bytes ({size} read); bridge-rules rewrites "
            "answers up to that size (bridge-rules serve --max-response-bytes)",
        )

    declared = response.content_length
    if declared is not None and declared > cap:
        raise too_big(declared)
    decoder = Decoder(applied) if applied else None
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in response.content.iter_any():
            data = decoder.feed(chunk, cap - size) if decoder is not None else chunk
            size += len(data)
            if size > cap:
                raise too_big(size)
            chunks.append(data)
    except Undecodable as exc:
        raise ProxyError(502, str(exc)) from None
    except READ_ERRORS as exc:
        status = 502 if isinstance(exc, aiohttp.ClientPayloadError) else 504
        raise ProxyError(status, read_fault(exc, timeout)) from None
    return b"".join(chunks)


async def _message(
    upstream: Upstream,
    turn: Turn | None,
    ex: Exchange,
    response: aiohttp.ClientResponse,
    applied: list[str],
    *,
    guarded: bool,
) -> None:
    """The JSON answer rewritten by ``turn``; ``guarded``: a 502 when it cannot be read
    (``proxy.strict``)."""
    config = upstream.config
    data = await _read_capped(response, applied, config.max_response_bytes, config.timeout)
    with paused_for(len(data)):
        message: Any = None
        try:
            message = read_message(data) if guarded else jsonio.loads(data)
        except Unreadable as exc:
            raise ProxyError(502, str(exc)) from None
        except jsonio.JSONDecodeError:
            pass
        unmapped = ""
        if isinstance(message, dict) and turn is not None:
            rewritten = turn.message(message)
            ex.reply.record.noted(turn.report)
            unmapped = turn.report.header_value() or ""
            if not _same(rewritten, message):  # else the upstream's own bytes go back
                data = jsonio.dumps(rewritten)
            if ex.debug_log is not None:
                ex.debug["response_body"] = ex.debug_log.body(rewritten)
    headers = filter_headers(response.raw_headers, REWRITE_DROP)
    if unmapped and turn is not None:  # inbound.unmapped: warn|error, calls no rule maps back
        headers.append((turn.report.HEADER.encode(), unmapped.encode("latin-1")))
    refused = turn is not None and turn.report.refusal is not None  # policy.on_denied: error
    await ex.reply.full(403 if refused else response.status, headers, data)
