"""Reading and checking the client's request: header limits, body size and time, JSON."""

from __future__ import annotations

import asyncio
from typing import Any

from bridge_rules import jsonio
from bridge_rules.proxy.errors import ProxyError
from bridge_rules.proxy.reply import Message, Receive


class ClientGone(Exception):
    """The client disconnected before its request was complete."""


def check_headers(scope: Message, max_count: int, max_bytes: int) -> None:
    """431 for a request with too many headers or too many header bytes; O(headers)."""
    headers = scope["headers"]
    if len(headers) > max_count:
        raise ProxyError(
            431,
            f"the request has {len(headers)} headers; this proxy accepts at most {max_count} "
            "(bridge-rules serve --max-headers)",
            close=True,
        )
    size = sum(len(n) + len(v) for n, v in headers)
    if size > max_bytes:
        raise ProxyError(
            431,
            f"the request's headers are {size} bytes; this proxy accepts at most {max_bytes} "
            "(bridge-rules serve --max-header-bytes)",
            close=True,
        )


def _declared_length(scope: Message) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                raise ProxyError(400, "content-length is not a number") from None
    return None


async def read_body(scope: Message, receive: Receive, limit: int, timeout: float) -> bytes:
    """The whole body; 413 when it is (or says it will be) larger than ``limit``, 408 when
    it has not all arrived within ``timeout`` seconds.

    An oversized body is still drained (up to twice the limit) before the 413 is
    sent, so the client reads the answer instead of a reset connection; unless the client
    is waiting for ``100 Continue`` before it sends the body: then the 413 is sent at once
    and the body never asked for (RFC 9110 10.1.1).
    """
    task = asyncio.current_task()
    if task is None or not hasattr(task, "uncancel"):  # Python 3.10
        try:
            return await asyncio.wait_for(_read(scope, receive, limit), timeout)
        except asyncio.TimeoutError:
            raise _late(timeout) from None
    # asyncio.timeout's own rule, without its object and state machine (a tenth of a
    # small request's own work in the proxy): the timer cancels the task, and the
    # CancelledError that timer caused (and no other cancellation) becomes the 408.
    deadline = _Deadline(task)
    handle = asyncio.get_running_loop().call_later(timeout, deadline.expire)
    try:
        return await _read(scope, receive, limit)
    except asyncio.CancelledError:
        if deadline.expired and task.uncancel() <= deadline.cancelling:  # type: ignore[attr-defined,unused-ignore]
            raise _late(timeout) from None
        raise
    finally:
        handle.cancel()


class _Deadline:
    __slots__ = ("cancelling", "expired", "task")

    def __init__(self, task: asyncio.Task[Any]) -> None:
        self.task = task
        self.cancelling: int = task.cancelling()  # type: ignore[attr-defined,unused-ignore]
        self.expired = False

    def expire(self) -> None:
        self.expired = True
        self.task.cancel()


def _late(timeout: float) -> ProxyError:
    return ProxyError(
        408,
        f"the request body did not arrive within {timeout:g}s (bridge-rules serve --body-timeout)",
        close=True,
    )


def _waits_for_continue(scope: Message) -> bool:
    return scope.get("http_version") != "1.0" and any(
        n == b"expect" and v.strip().lower() == b"100-continue" for n, v in scope["headers"]
    )


async def _read(scope: Message, receive: Receive, limit: int) -> bytes:
    declared = _declared_length(scope)
    too_big = declared is not None and declared > limit
    if too_big and _waits_for_continue(scope):
        raise _too_large(declared, limit, close=True)
    chunks: list[bytes] = []
    size = 0
    more = True
    while more:
        msg = await receive()
        if msg["type"] == "http.disconnect":
            raise ClientGone
        data = msg.get("body", b"")
        size += len(data)
        more = bool(msg.get("more_body"))
        if size > limit:
            too_big = True
            if size > 2 * limit:
                break
        if not too_big:
            chunks.append(data)
    if too_big:
        raise _too_large(declared if declared is not None else size, limit, close=more)
    return b"".join(chunks)


def _too_large(size: int | None, limit: int, close: bool) -> ProxyError:
    return ProxyError(
        413,
        f"request body is {size} bytes; this proxy accepts at most {limit} "
        "(bridge-rules serve --max-body-bytes)",
        close=close,
    )


_JSON_KINDS = {list: "array", str: "string", int: "number", float: "number", bool: "boolean"}
_JSON_KINDS[type(None)] = "null"


def unreadable(exc: jsonio.JSONDecodeError) -> ProxyError:
    """The 400 for a request body that does not parse (or nests too deep to be read)."""
    if isinstance(exc, jsonio.NestedTooDeep):
        return ProxyError(400, f"request body is {exc}")
    return ProxyError(400, f"request body is not valid JSON: {exc}")


def parse_payload(body: bytes) -> dict[str, Any]:
    """The request as a JSON object, or a 400 saying precisely what is wrong."""
    if not body.strip():
        raise ProxyError(400, "request body is empty; expected a JSON object")
    try:
        payload = jsonio.loads(body)
    except jsonio.JSONDecodeError as exc:
        raise unreadable(exc) from None
    if not isinstance(payload, dict):
        kind = _JSON_KINDS.get(type(payload), "value")
        raise ProxyError(400, f"request body must be a JSON object, not a JSON {kind}")
    return payload
