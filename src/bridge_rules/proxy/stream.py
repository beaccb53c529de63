"""Watching a response stream on its way to the client.

:class:`StreamWatch` follows the last bytes sent, so the proxy knows whether the
stream already ended properly (``message_stop``) or already carries the upstream's
own ``error`` event; in either case it adds no error event of its own.
:func:`capped_events` stops a stream whose current SSE event has grown past the
cap, before the stream rewriter buffers it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

_STOP = b"message_stop"
_ERRORS = (b"event: error", b"event:error", b'data: {"type":"error"', b'data: {"type": "error"')
_KEEP = 64  # bytes of the previous chunk kept, so a marker split across chunks is seen
# Every SSE event boundary (two line ends in a row, each CRLF, LF or CR) contains one of
# these, and each of them is a boundary.
_BOUNDARIES = (b"\n\n", b"\r\r", b"\n\r")


class StreamWatch:
    def __init__(self) -> None:
        self._tail = b""
        self.stopped = False  # a message_stop went out
        self.upstream_error = False  # the upstream's own error event went out

    def saw(self, chunk: bytes) -> None:
        window = self._tail + chunk
        if _STOP in window:
            self.stopped = True
        if any(marker in window for marker in _ERRORS):
            self.upstream_error = True
        self._tail = window[-_KEEP:]

    @property
    def finished(self) -> bool:
        return self.stopped or self.upstream_error


class EventTooLarge(Exception):
    """One SSE event from the upstream grew past the cap."""

    def __init__(self, cap: int) -> None:
        super().__init__(
            f"an SSE event from the upstream exceeded {cap} bytes "
            "(bridge-rules serve --max-sse-event-bytes); the stream was closed"
        )


async def capped_events(chunks: AsyncIterator[bytes], cap: int) -> AsyncIterator[bytes]:
    """``chunks`` unchanged, raising :class:`EventTooLarge` once an event passes ``cap``."""
    since = 0  # bytes since the last event boundary
    last = b""
    async for chunk in chunks:
        window = last + chunk
        end = max(window.rfind(b) for b in _BOUNDARIES)
        since = len(window) - end - 2 if end >= 0 else since + len(chunk)
        if since > cap:
            raise EventTooLarge(cap)
        last = chunk[-1:]
        yield chunk
