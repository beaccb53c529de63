"""Reading and parsing the client's request body, with a size limit."""

from __future__ import annotations

from typing import Any

import orjson

from bridge_rules.proxy.errors import ProxyError
from bridge_rules.proxy.reply import Message, Receive


class ClientGone(Exception):
    """The client disconnected before its request was complete."""


def _declared_length(scope: Message) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                raise ProxyError(400, "content-length is not a number") from None
    return None


async def read_body(scope: Message, receive: Receive, limit: int) -> bytes:
    """The whole body, or 413 when it is (or says it will be) larger than ``limit``.

    An oversized body is still drained (up to twice the limit) before the 413 is
    sent, so the client reads the answer instead of a reset connection.
    """
    declared = _declared_length(scope)
    too_big = declared is not None and declared > limit
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
        shown = declared if declared is not None else size
        raise ProxyError(
            413,
            f"request body is {shown} bytes; this proxy accepts at most {limit} "
            "(bridge-rules serve --max-body-bytes)",
        )
    return b"".join(chunks)


_JSON_KINDS = {list: "array", str: "string", int: "number", float: "number", bool: "boolean"}
_JSON_KINDS[type(None)] = "null"


def parse_payload(body: bytes) -> dict[str, Any]:
    """The request as a JSON object, or a 400 saying precisely what is wrong."""
    if not body.strip():
        raise ProxyError(400, "request body is empty; expected a JSON object")
    try:
        payload = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise ProxyError(400, f"request body is not valid JSON: {exc}") from None
    if not isinstance(payload, dict):
        kind = _JSON_KINDS.get(type(payload), "value")
        raise ProxyError(400, f"request body must be a JSON object, not a JSON {kind}")
    return payload
