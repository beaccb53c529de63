"""Content codings of an upstream answer the proxy must read to rewrite.

The proxy asks the upstream for ``accept-encoding: identity`` when it will rewrite the
answer, but an upstream may encode anyway. ``Content-Encoding`` is a list, applied in
order (RFC 9110 8.4), so it is undone from the last coding to the first; ``x-gzip`` is
``gzip`` (8.4.1.3). An answer is rewritten only when every coding in the list can be
undone here (gzip, deflate, and br when the ``brotli`` package is installed); any other
(``compress``, ``zstd``, a name nobody registered) goes to the client untouched, its
``Content-Encoding`` kept, as a proxy that cannot transform a body must pass it on.

Decoding is bounded: a decoder gives out at most ``cap`` bytes in all (a JSON answer) or
per chunk fed (a stream), so a small compressed body cannot expand into a worker's memory.
"""

from __future__ import annotations

import importlib
import zlib
from collections.abc import AsyncIterator
from typing import Any

_ALIASES = {"x-gzip": "gzip", "x-compress": "compress"}
_STEP = 64 * 1024  # bytes a zlib step may give out before the cap is checked again


def _brotli() -> Any:
    try:
        return importlib.import_module("brotli")
    except ImportError:
        return None


_BROTLI = _brotli()
_CORRUPT: tuple[type[Exception], ...] = (zlib.error, ValueError, OSError) + (
    (_BROTLI.error,) if _BROTLI is not None else ()
)


class Undecodable(Exception):
    """An encoded body the proxy could not undo: corrupt, or larger than the cap decoded."""


def codings(header: str | None) -> list[str]:
    """The codings a ``Content-Encoding`` value lists, lower-cased, in the order applied;
    ``identity`` (no coding) left out."""
    if not header:
        return []
    named = (part.strip().lower() for part in header.split(","))
    return [_ALIASES.get(c, c) for c in named if c and c != "identity"]


def decodable(applied: list[str]) -> bool:
    """Whether the proxy can undo every coding in ``applied``."""
    supported = {"gzip", "deflate"} | ({"br"} if _BROTLI is not None else set())
    return all(c in supported for c in applied)


class _Zlib:
    def __init__(self, coding: str) -> None:
        self._gzip = coding == "gzip"
        # gzip: header and trailer; deflate: the zlib format (RFC 9110 8.4.1.2), with raw
        # deflate accepted too, as every browser does for servers that send it.
        self._obj = zlib.decompressobj(16 + zlib.MAX_WBITS if self._gzip else zlib.MAX_WBITS)
        self._first = True

    def feed(self, data: bytes, cap: int) -> bytes:
        if self._first and not self._gzip and data:
            self._first = False
            if data[0] & 0x0F != 8:  # not a zlib header: raw deflate
                self._obj = zlib.decompressobj(-zlib.MAX_WBITS)
        out: list[bytes] = []
        size = 0
        while True:
            piece = self._obj.decompress(data, _STEP)
            size += len(piece)
            if size > cap:
                raise Undecodable(f"the answer is larger than {cap} bytes decoded")
            out.append(piece)
            data = self._obj.unconsumed_tail
            if self._obj.eof and self._gzip and self._obj.unused_data:  # gzip members in a row
                data = self._obj.unused_data + data
                self._obj = zlib.decompressobj(16 + zlib.MAX_WBITS)
            elif not data and len(piece) < _STEP:  # a full step may leave output pending
                return b"".join(out)


class _Brotli:
    def __init__(self) -> None:
        self._obj = _BROTLI.Decompressor()

    def feed(self, data: bytes, cap: int) -> bytes:
        out: bytes = self._obj.process(data)
        if len(out) > cap:
            raise Undecodable(f"the answer is larger than {cap} bytes decoded")
        return out


class Decoder:
    """Undoes ``applied`` (codings :func:`decodable` accepts), last coding first."""

    def __init__(self, applied: list[str]) -> None:
        self.name = ", ".join(applied)
        steps: list[_Zlib | _Brotli] = [_Brotli() if c == "br" else _Zlib(c) for c in applied]
        self._steps = steps[::-1]

    def feed(self, data: bytes, cap: int) -> bytes:
        """The decoded bytes ``data`` completes, at most ``cap`` of them, else
        :class:`Undecodable`; so is a corrupt body."""
        try:
            for step in self._steps:
                data = step.feed(data, cap)
        except _CORRUPT as exc:
            raise Undecodable(f"the answer is not valid {self.name}: {exc}") from None
        return data


async def decoded(chunks: AsyncIterator[bytes], decoder: Decoder, cap: int) -> AsyncIterator[bytes]:
    """``chunks`` decoded as they come, each chunk's output at most ``cap`` bytes."""
    async for chunk in chunks:
        out = decoder.feed(chunk, cap)
        if out:
            yield out
