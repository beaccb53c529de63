"""The way back of ``models:``: each thinking block's signature marked with its model.

See :mod:`bridge_rules.transform.model_fit` for why the mark rides in the signature. The
model marked is the one the answer names (``message.model``; a server-side fallback can
answer with another model than asked), else the one the request asked for.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from functools import partial
from typing import Any

from bridge_rules import jsonio
from bridge_rules.transform.chunks import drive, drive_async
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


class _Marker:
    """SSE lines in, the same lines out with signatures marked; any chunking works."""

    def __init__(self, asked: str | None) -> None:
        self.model = asked
        self.rest = b""

    def feed(self, chunk: bytes) -> bytes:
        data = self.rest + chunk
        cut = data.rfind(b"\n") + 1
        self.rest = data[cut:]
        if cut == 0:
            return b""
        return b"".join(self._line(line) for line in data[:cut].splitlines(keepends=True))

    def close(self) -> bytes:
        rest, self.rest = self.rest, b""
        return self._line(rest) if rest else b""

    def _line(self, line: bytes) -> bytes:
        if not line.startswith(b"data:") or (
            b"signature" not in line and b"message_start" not in line and b"redacted" not in line
        ):
            return line
        body = line[5:].strip()
        try:
            event = jsonio.loads(body)
        except ValueError:
            return line
        if not isinstance(event, dict):
            return line
        changed = self._event(event)
        if not changed:
            return line
        end = line[len(line.rstrip(b"\r\n")) :]
        return b"data: " + jsonio.dumps(event) + end

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
