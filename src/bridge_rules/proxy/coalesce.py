"""A response's head and its body written to the client's socket together.

uvicorn writes the status line and headers as soon as the app sends
``http.response.start``, and the body with the next message: two ``send`` calls on the
socket for every answer, and on loopback the kernel runs the receiving side of each in
the sender's time. :class:`HeldHead`, the transport ``proxy.guard`` gives each client
connection, keeps a write back until the next one in the same event-loop turn and makes
the two one call; what no write follows in that turn (a stream's head while the upstream
thinks, its last chunk) goes out when the turn ends. Every write of the connection goes
through it, the protocol's own (a 400, a 408) too, so the bytes on the wire are the same
in the same order; only how they are cut into ``send`` calls changes, and none waits
past the loop turn that wrote it.
"""

from __future__ import annotations

import asyncio
from typing import Any

JOIN_LIMIT = 64 * 1024
"""A write up to this size is joined to the one held (copying both); a larger one follows
it in a call of its own, uncopied."""


class HeldHead:
    """The connection's transport, holding at most one write until the loop turn ends;
    everything but writing, closing and aborting is the real transport's."""

    __slots__ = ("_held", "_loop", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: bytes | None = None

    def write(self, data: bytes) -> None:
        held = self._held
        if held is None:
            if not data or self._transport.is_closing():
                self._transport.write(data)  # as before: the transport says what it does
                return
            self._held = data  # a head: its body usually follows in this very turn
            self._loop.call_soon(self.release)
            return
        self._held = None
        if len(data) <= JOIN_LIMIT and len(held) <= JOIN_LIMIT:
            self._transport.write(held + data)
        else:
            self._transport.write(held)
            self._transport.write(data)

    def writelines(self, data: Any) -> None:
        """As :meth:`write` (the real transport's own would pass what is held)."""
        self.write(b"".join(data))

    def release(self) -> None:
        """Write what is held now; nothing once the peer is gone (the loop closed the
        transport in between: those bytes had no reader either way)."""
        held = self._held
        if held is not None:
            self._held = None
            if not self._transport.is_closing():
                self._transport.write(held)

    def close(self) -> None:
        self.release()
        self._transport.close()

    def abort(self) -> None:
        self.release()
        self._transport.abort()

    def write_eof(self) -> None:
        self.release()
        self._transport.write_eof()

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)
