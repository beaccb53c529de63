"""The way back of ``models:``: each thinking block's signature marked with its model.

See :mod:`bridge_rules.transform.model_fit` for why the mark rides in the signature. The
model marked is the one the answer names (``message.model``; a server-side fallback can
answer with another model than asked), else the one the request asked for.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from functools import partial
from typing import Any

from bridge_rules.transform.chunks import drive, drive_async
from bridge_rules.transform.framing import Framed, Framer
from bridge_rules.transform.model_fit import SEALED, mark


def mark_message(message: Any, asked: str | None) -> Any:
    """A non-streaming answer with its thinking blocks marked (a new dict when changed)."""
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        return message
    model = message.get("model") if isinstance(message.get("model"), str) else asked
    if not model:
        return message
    blocks = []
    changed = False
    for block in message["content"]:
        key = SEALED.get(block.get("type")) if isinstance(block, dict) else None
        if key is not None and isinstance(block.get(key), str):
            blocks.append({**block, key: mark(block[key], model)})
            changed = True
        else:
            blocks.append(block)
    return {**message, "content": blocks} if changed else message


# Bytes an event must hold for the marker to read it; a ``\\u`` escape can spell any key or
# type, so an event holding one is read too.
_WORTH = (b"signature", b"message_start", b"redacted", b"\\u")


class _Marker:
    """SSE in, the same events out with their signatures marked; any chunking works.

    The stream is cut by :class:`Framer` and each event's data read as JSON, as a client
    reads them. A scanner of ``\\n``-ended lines that looked for ``signature`` as written
    left a signature unmarked (so ``thinking.unknown`` decided it on the way out, not
    ``thinking.foreign``) when the upstream ended lines with a lone CR (and held the whole
    answer until its end), wrote a key or a type with a ``\\u`` escape
    (``"\\u0073ignature"``), or spread an event's data over several ``data:`` lines, all of
    which the SSE format and JSON allow. An event nothing marks goes on as received."""

    def __init__(self, asked: str | None) -> None:
        self.model = asked
        self.framer = Framer()

    def feed(self, chunk: bytes) -> bytes:
        run = self.framer.feed(chunk)
        return b"" if run is None else self._run(run)

    def close(self) -> bytes:
        last, tail = self.framer.close()  # an unended event is the client's to drop: as is
        return (b"" if last is None else self._run(last)) + tail

    def _run(self, run: Framed) -> bytes:
        if all(run.find(word) < 0 for word in _WORTH):
            return run
        out = []
        for event in run.events():
            data = event.json()
            changed = isinstance(data, dict) and self._event(data)
            out.append(event.with_data(data).raw if changed else event.raw)
        return b"".join(out)

    def _event(self, event: dict[str, Any]) -> bool:
        kind = event.get("type")
        if kind == "message_start" and isinstance(event.get("message"), dict):
            said = event["message"].get("model")
            self.model = said if isinstance(said, str) and said else self.model
            return False
        if not self.model:
            return False
        delta = event.get("delta")
        if (
            kind == "content_block_delta"
            and isinstance(delta, dict)
            and delta.get("type") == "signature_delta"
            and isinstance(delta.get("signature"), str)
        ):
            delta["signature"] = mark(delta["signature"], self.model)
            return True
        block = event.get("content_block")
        if kind == "content_block_start" and isinstance(block, dict):
            key = SEALED.get(block.get("type"))
            if key is not None and isinstance(block.get(key), str) and block[key]:
                block[key] = mark(block[key], self.model)
                return True
        return False


def mark_stream(chunks: Iterable[bytes], asked: str | None) -> Iterator[bytes]:
    """An SSE answer with its signatures marked; any chunking works."""
    return drive(partial(_Marker, asked), chunks)


def mark_stream_async(chunks: AsyncIterable[bytes], asked: str | None) -> AsyncIterator[bytes]:
    """:func:`mark_stream` over an async iterable (an ASGI or aiohttp body)."""
    return drive_async(partial(_Marker, asked), chunks)
