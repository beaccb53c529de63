"""One request to the upstream and its answer back to the client.

Three ways back: untouched (gate closed, errors, other paths, count_tokens),
a rewritten SSE stream sent event by event as the rewriter yields it, or a
rewritten JSON message with a recomputed ``content-length`` (the upstream's own
bytes, decompressed, when the rewrite changed nothing in it).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

import aiohttp

from bridge_rules import jsonio
from bridge_rules.gcpause import paused
from bridge_rules.proxy.errors import ProxyError, UpstreamAborted, sse_error_event
from bridge_rules.proxy.headers import filter_headers, is_secret, redact, request_headers
from bridge_rules.proxy.obs import DebugLog
from bridge_rules.proxy.reply import Message, Reply
from bridge_rules.proxy.stream import EventTooLarge, StreamWatch, relay, too_large
from bridge_rules.proxy.upstream import READ_ERRORS, Upstream, read_fault
from bridge_rules.transform.turn import Turn
from bridge_rules.transform.unmapped import HEADER as UNMAPPED_HEADER

REWRITE_DROP = frozenset({b"content-length", b"content-encoding"})
DEBUG_STREAM_CAP = 1 << 20  # bytes of a streamed body the debug log keeps (--log-prompts)


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

    def rewritten(self, turn: Turn) -> None:
        """Take the outbound rewrite (called with the collector paused)."""
        if turn.gate_open:
            self.turn = turn
            self.body = turn.body

    def debug_record(self) -> dict[str, Any]:
        rec = self.reply.record
        query = self.scope.get("query_string", b"").decode("latin-1")
        return {
            **rec.to_dict(),
            "query": [[k, "<redacted>" if is_secret(k) else v] for k, v in parse_qsl(query)],
            "request_headers": redact(self.scope["headers"]),
            **self.debug,
        }


async def forward(upstream: Upstream, ex: Exchange) -> None:
    turn = ex.turn
    rewriting = turn is not None
    headers = request_headers(ex.scope["headers"], identity=rewriting)
    messages = ex.scope["path"] == "/v1/messages"
    record = ex.reply.record
    sent = time.perf_counter()
    response = await upstream.send(ex.scope, headers, ex.body, decompress=rewriting and messages)
    try:
        record.upstream_ms = round((time.perf_counter() - sent) * 1000, 3)
        record.upstream_status = response.status
        if ex.debug_log is not None:
            ex.debug["response_headers"] = redact(response.raw_headers)
        is_sse = response.headers.get("content-type", "").startswith("text/event-stream")
        if turn is None or response.status >= 400 or not messages:
            await _untouched(upstream, ex, response, is_sse and messages)
        elif is_sse:
            await _stream(upstream, turn, ex, response)
        else:
            await _message(upstream, turn, ex, response)
    finally:
        response.close()


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
    upstream: Upstream, ex: Exchange, response: aiohttp.ClientResponse, sse: bool
) -> None:
    encoded = response.headers.get("content-encoding", "identity") != "identity"
    await ex.reply.start(response.status, filter_headers(response.raw_headers, frozenset()))
    chunks: AsyncIterator[bytes] = response.content.iter_any()
    watch = None
    if sse and not encoded and response.status < 400:
        watch = StreamWatch()
        chunks = relay(chunks, upstream.config.max_sse_event_bytes, watch, untouched=True)
    await _send_stream(ex, chunks, upstream.config.timeout, watch)


async def _stream(
    upstream: Upstream, turn: Turn, ex: Exchange, response: aiohttp.ClientResponse
) -> None:
    await ex.reply.start(response.status, filter_headers(response.raw_headers, REWRITE_DROP))
    watch = StreamWatch()
    events = relay(response.content.iter_any(), upstream.config.max_sse_event_bytes, watch)
    chunks = turn.stream_async(events)
    try:
        await _send_stream(ex, chunks, upstream.config.timeout, watch)
    finally:
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


async def _message(
    upstream: Upstream, turn: Turn, ex: Exchange, response: aiohttp.ClientResponse
) -> None:
    try:
        data = await response.read()
    except READ_ERRORS as exc:
        status = 502 if isinstance(exc, aiohttp.ClientPayloadError) else 504
        raise ProxyError(status, read_fault(exc, upstream.config.timeout)) from None
    with paused():
        try:
            message = jsonio.loads(data)
        except jsonio.JSONDecodeError:
            message = None
        unmapped = ""
        if isinstance(message, dict):
            rewritten = turn.message(message)
            ex.reply.record.noted(turn.report)
            unmapped = turn.report.header_value() or ""
            if not _same(rewritten, message):  # else the upstream's own bytes go back
                data = jsonio.dumps(rewritten)
            if ex.debug_log is not None:
                ex.debug["response_body"] = ex.debug_log.body(rewritten)
    headers = filter_headers(response.raw_headers, REWRITE_DROP)
    if unmapped:  # inbound.unmapped: warn|error named calls no rule maps back
        headers.append((UNMAPPED_HEADER.encode(), unmapped.encode("latin-1")))
    await ex.reply.full(response.status, headers, data)
