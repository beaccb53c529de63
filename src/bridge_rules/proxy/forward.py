"""One request to the upstream and its answer back to the client.

Three ways back: untouched (gate closed, errors, other paths, count_tokens),
a rewritten SSE stream sent event by event as the engine yields it, or a
rewritten JSON message with a recomputed ``content-length``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

import httpx
import orjson

from bridge_rules.proxy.errors import ProxyError, UpstreamAborted, sse_error_event
from bridge_rules.proxy.headers import filter_headers, is_secret, redact, request_headers
from bridge_rules.proxy.obs import DebugLog
from bridge_rules.proxy.reply import Message, Reply

if TYPE_CHECKING:
    from bridge_rules.proxy.app import OutboundLike, ProxyApp

REWRITE_DROP = frozenset({b"content-length", b"content-encoding"})
STOP = b"message_stop"
DEBUG_STREAM_CAP = 1 << 20  # bytes of a streamed body the debug log keeps (--log-prompts)


@dataclass
class Exchange:
    scope: Message
    body: bytes
    reply: Reply
    debug_log: DebugLog | None
    result: OutboundLike | None = None
    debug: dict[str, Any] = field(default_factory=dict)

    @property
    def rewriting(self) -> bool:
        return self.result is not None and self.result.gate_open

    def debug_record(self) -> dict[str, Any]:
        rec = self.reply.record
        query = self.scope.get("query_string", b"").decode("latin-1")
        return {
            **rec.to_dict(),
            "query": [[k, "<redacted>" if is_secret(k) else v] for k, v in parse_qsl(query)],
            "request_headers": redact(self.scope["headers"]),
            **self.debug,
        }


def _url(app: ProxyApp, scope: Message) -> str:
    path: bytes = scope.get("raw_path") or scope["path"].encode()
    url = app.config.base + path.decode("latin-1")
    if scope.get("query_string"):
        url += "?" + scope["query_string"].decode("latin-1")
    return url


async def forward(app: ProxyApp, ex: Exchange) -> None:
    scope, timeout = ex.scope, app.config.timeout
    rewriting = ex.rewriting
    content = orjson.dumps(ex.result.payload) if rewriting and ex.result else ex.body
    headers = request_headers(scope["headers"], identity=rewriting)
    request = app.client.build_request(
        scope["method"], _url(app, scope), headers=headers, content=content
    )
    try:
        response = await app.client.send(request, stream=True)
    except httpx.TimeoutException:
        raise ProxyError(504, f"the upstream did not answer within {timeout:g}s") from None
    except httpx.HTTPError as exc:
        raise ProxyError(502, f"cannot reach the upstream: {type(exc).__name__}: {exc}") from None
    ex.reply.record.upstream_status = response.status_code
    if ex.debug_log is not None:
        ex.debug["response_headers"] = redact(response.headers.raw)
    try:
        is_sse = response.headers.get("content-type", "").startswith("text/event-stream")
        messages = scope["path"] == "/v1/messages"
        if not rewriting or response.status_code >= 400 or not messages:
            await _untouched(app, ex, response, is_sse and messages)
        elif is_sse:
            await _stream(app, ex, response)
        else:
            await _message(app, ex, response)
    finally:
        await response.aclose()


def _fault(exc: Exception, timeout: float) -> str:
    if isinstance(exc, httpx.TimeoutException):
        return f"the upstream sent nothing for {timeout:g}s and the stream was abandoned"
    return f"the upstream closed the stream mid-response ({type(exc).__name__})"


async def _send_stream(
    ex: Exchange, chunks: AsyncIterator[bytes], timeout: float, can_tell: bool
) -> None:
    """Send ``chunks`` as they come; a fault becomes an SSE ``error`` event when the body
    is a plain SSE stream, else the connection is closed (a truncated body, never a
    silently complete one)."""
    tail = b""
    keep = ex.debug_log is not None and ex.debug_log.log_prompts
    kept: list[bytes] = []
    try:
        async for chunk in chunks:
            await ex.reply.chunk(chunk)
            if keep and ex.reply.record.bytes_out <= DEBUG_STREAM_CAP:
                kept.append(chunk)
            if can_tell:
                tail = (tail + chunk)[-64:] if len(chunk) < 64 else chunk[-64:]
                if STOP in tail or STOP in chunk:
                    can_tell = False  # a complete message: nothing more to guard
                    tail = b""
    except (httpx.HTTPError, httpx.StreamError) as exc:
        if not can_tell:
            raise UpstreamAborted(_fault(exc, timeout)) from None
        await ex.reply.chunk(sse_error_event(_fault(exc, timeout)))
        ex.reply.record.error = "upstream_stream_error"
    else:
        if can_tell and ex.reply.record.status < 400:
            await ex.reply.chunk(
                sse_error_event("the upstream ended the stream before message_stop")
            )
            ex.reply.record.error = "upstream_stream_incomplete"
    finally:
        if kept:
            ex.debug["response_stream"] = b"".join(kept).decode("utf-8", "replace")
    await ex.reply.finish()


async def _untouched(app: ProxyApp, ex: Exchange, response: httpx.Response, sse: bool) -> None:
    encoded = response.headers.get("content-encoding", "identity") != "identity"
    await ex.reply.start(response.status_code, filter_headers(response.headers.raw, frozenset()))
    can_tell = sse and not encoded and response.status_code < 400
    await _send_stream(ex, response.aiter_raw(), app.config.timeout, can_tell)


async def _stream(app: ProxyApp, ex: Exchange, response: httpx.Response) -> None:
    assert ex.result is not None
    await ex.reply.start(response.status_code, filter_headers(response.headers.raw, REWRITE_DROP))
    chunks = app.engine.inbound_stream_async(response.aiter_bytes(), ex.result.registered)
    await _send_stream(ex, chunks, app.config.timeout, True)


async def _message(app: ProxyApp, ex: Exchange, response: httpx.Response) -> None:
    assert ex.result is not None
    try:
        data = await response.aread()
    except httpx.TimeoutException:
        raise ProxyError(504, _fault(httpx.ReadTimeout(""), app.config.timeout)) from None
    except (httpx.HTTPError, httpx.StreamError) as exc:
        raise ProxyError(502, _fault(exc, app.config.timeout)) from None
    try:
        message = orjson.loads(data)
    except orjson.JSONDecodeError:
        message = None
    if isinstance(message, dict):
        rewritten = app.engine.inbound(message, ex.result.registered)
        data = orjson.dumps(rewritten)
        if ex.debug_log is not None:
            ex.debug["response_body"] = ex.debug_log.body(rewritten)
    await ex.reply.full(
        response.status_code, filter_headers(response.headers.raw, REWRITE_DROP), data
    )
