"""Sending one ASGI response, remembering whether it has started.

Once the status line is out, a fault can only be told in the body (an SSE
``error`` event) or by closing the connection; this object is what lets the
handlers know which of the two situations they are in.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from bridge_rules.proxy.errors import error_body
from bridge_rules.proxy.obs import AccessRecord

Message = MutableMapping[str, Any]
Send = Callable[[Message], Awaitable[None]]
Receive = Callable[[], Awaitable[Message]]

JSON = b"application/json"


class Reply:
    def __init__(self, send: Send, record: AccessRecord) -> None:
        self._send = send
        self.record = record
        self.started = False

    async def start(self, status: int, headers: list[tuple[bytes, bytes]]) -> None:
        self.started = True
        self.record.status = status
        await self._send({"type": "http.response.start", "status": status, "headers": headers})

    async def chunk(self, data: bytes) -> None:
        if data:
            self.record.bytes_out += len(data)
            await self._send({"type": "http.response.body", "body": data, "more_body": True})

    async def finish(self) -> None:
        await self._send({"type": "http.response.body", "body": b"", "more_body": False})

    async def full(self, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
        headers = [*headers, (b"content-length", str(len(body)).encode())]
        self.started = True
        self.record.status = status
        self.record.bytes_out += len(body)
        await self._send({"type": "http.response.start", "status": status, "headers": headers})
        await self._send({"type": "http.response.body", "body": body, "more_body": False})

    async def error(
        self,
        status: int,
        message: str,
        close: bool = False,
        extra: tuple[tuple[bytes, bytes], ...] = (),
    ) -> None:
        headers = [(b"content-type", JSON), *extra]
        if close:
            headers.append((b"connection", b"close"))
        await self.full(status, headers, error_body(status, message))
