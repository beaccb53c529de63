"""A push-style byte rewriter, and the one loop that drives it from a sync or async body.

Every stream rewriter here is a push core (``feed`` a chunk, get bytes back; ``close``
flushes the tail), so the same object serves a WSGI-style iterable and an ASGI or aiohttp
body. :func:`drive` and :func:`drive_async` are the only loops around such a core: the
stream entry points and the ``models:`` marks both go through them, so the sync and async
paths cannot drift apart. The core is made from ``start`` on the first pull, as a
generator's body would make it, so nothing runs before the stream is read.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator
from typing import Protocol


class ChunkRewriter(Protocol):
    """Bytes in any chunking -> rewritten bytes; ``close()`` flushes the tail."""

    def feed(self, chunk: bytes) -> bytes: ...

    def close(self) -> bytes: ...


def drive(start: Callable[[], ChunkRewriter], chunks: Iterable[bytes]) -> Iterator[bytes]:
    """``chunks`` through the rewriter ``start`` makes; empty outputs are not yielded."""
    rw = start()
    for chunk in chunks:
        if out := rw.feed(chunk):
            yield out
    if tail := rw.close():
        yield tail


async def drive_async(
    start: Callable[[], ChunkRewriter], chunks: AsyncIterable[bytes]
) -> AsyncIterator[bytes]:
    """:func:`drive` over an async iterable (an ASGI or aiohttp body)."""
    rw = start()
    async for chunk in chunks:
        if out := rw.feed(chunk):
            yield out
    if tail := rw.close():
        yield tail
