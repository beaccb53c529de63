"""Recover a tool call a model wrote as text: ``<tool_call>{"name": ..., ...}</tool_call>``.

Some models (pi-flows saw it after ``max_tokens`` truncation and on weaker
gateways) print the call instead of emitting a ``tool_use`` block. Turned on by
``text.recover_tool_calls``; only calls that map to a registered local tool are
recovered, so prose that merely mentions the tag is left alone.

One scanner serves both ways back. :class:`TextScanner` takes text in any
pieces and answers with what may be released at once: text, or a recovered
call. It holds back only what could still turn out to belong to a tag (a
partial ``<tool_call>``, an open tag's body, and whitespace that opens a text
segment, until something else arrives). The non-streaming rewriter feeds a
block's whole text at once; the SSE rewriter feeds every text delta; both get
the same pieces, so a stream and the message it would have been agree.

A block's text is split at each recovered call: ``A <tool_call>…</tool_call> B``
becomes text ``A ``, the call, text ``B``: whitespace after a call is dropped,
and so is a segment with nothing but whitespace (the API refuses such text
blocks). A tag left open at the end of the block (a ``max_tokens`` cut, or
``</tool_call>`` used as a stop sequence) is recovered when its body is already
a complete call.
"""

from __future__ import annotations

import hashlib
from typing import Any

from bridge_rules import jsonio
from bridge_rules.calls import ToolCall
from bridge_rules.transform.scope import CallScope

OPEN = "<tool_call>"
CLOSE = "</tool_call>"
_MAX_BODY = 1 << 20
RECOVERABLE_STOPS = frozenset({"end_turn", "stop_sequence", "max_tokens"})
"""Stop reasons that become ``tool_use`` once a call was recovered."""


Recovered = ToolCall
"""A call found in text, in local shape (with what repair noted for itself)."""

Piece = str | Recovered


def _parse(body: str) -> tuple[str, dict[str, Any]] | None:
    if len(body) > _MAX_BODY:
        return None
    try:
        obj = jsonio.loads(body)
    except jsonio.JSONDecodeError:
        return None
    if not isinstance(obj, dict) or not isinstance(obj.get("name"), str):
        return None
    args = obj.get("arguments", obj.get("args", obj))
    if isinstance(args, str):
        try:
            args = jsonio.loads(args)
        except jsonio.JSONDecodeError:
            return None
    if not isinstance(args, dict):
        return None
    if args is obj:
        args = {k: v for k, v in obj.items() if k != "name"}
    return obj["name"], args


def _partial(text: str, tag: str) -> int:
    """Length of the longest suffix of ``text`` that is a proper prefix of ``tag``."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:size]):
            return size
    return 0


class TextScanner:
    """Text in any pieces -> releasable text and recovered calls, chunking-independent."""

    def __init__(self, scope: CallScope) -> None:
        self.scope = scope
        self._pending = ""  # outside a tag: text not yet released
        self._space = ""  # inside a tag: the whitespace run held before it
        self._body: str | None = None  # inside a tag: what followed <tool_call>
        self._after_call = False  # drop whitespace that follows a recovered call
        self._fresh = True  # the text segment being written has no text but whitespace yet
        self._searched = 0  # inside a tag: the body up to here holds no </tool_call>

    def feed(self, text: str) -> list[Piece]:
        out: list[Piece] = []
        if self._body is not None:
            self._body += text
            self._close(out)
        else:
            self._pending += text
        while self._body is None and self._pending:
            if not self._outside(out):
                break
            self._close(out)
        return out

    def finish(self) -> list[Piece]:
        """The end of the block: an open tag whose body is a complete call is recovered."""
        out: list[Piece] = []
        if self._body is not None:
            body, space = self._body, self._space
            self._body, self._space = None, ""
            trimmed = body.rstrip()
            cut = _partial(trimmed, CLOSE)
            call = self._call(trimmed[: len(trimmed) - cut].strip())
            if call is not None:
                out.append(call)
            else:
                out.append(space + OPEN + body)
        elif self._pending:
            text = self._pending.lstrip() if self._after_call else self._pending
            if text:
                out.append(text)
        self._pending = ""
        self._after_call = False
        self._fresh = True
        return out

    @property
    def plain(self) -> bool:
        """Nothing held: text without ``<`` would come out exactly as it went in."""
        return self._body is None and not self._pending and not self._fresh

    def release(self) -> str:
        """Everything held, as text (a stream that ended without closing the block)."""
        held = self._pending if self._body is None else self._space + OPEN + self._body
        self._pending, self._space, self._body, self._searched = "", "", None, 0
        return held

    # ----------------------------------------------------------------- states
    def _outside(self, out: list[Piece]) -> bool:
        """Release what cannot start a tag; True when a tag opened."""
        text = self._pending
        if self._after_call:
            text = text.lstrip()
            if not text:
                self._pending = ""
                return False
            self._after_call = False
        at = text.find(OPEN)
        end = at if at >= 0 else len(text) - _partial(text, OPEN)
        before = text[:end]
        self._space = ""
        if self._fresh and not before.strip():
            # only whitespace in this segment so far: a recovered call would leave it empty
            if at < 0:
                self._pending = text
                return False
            self._space = before
        elif before:
            out.append(before)
            self._fresh = False
        if at < 0:
            self._pending = text[end:]
            return False
        self._body = text[at + len(OPEN) :]
        self._pending = ""
        return True

    def _close(self, out: list[Piece]) -> None:
        """Inside a tag: settle it once ``</tool_call>`` arrives (or the body is too long)."""
        body = self._body
        assert body is not None
        end = body.find(CLOSE, self._searched)
        if end < 0:
            self._searched = max(0, len(body) - len(CLOSE) + 1)
            if len(body) > _MAX_BODY + len(CLOSE):
                out.append(self._space + OPEN + body)
                self._body, self._space, self._searched = None, "", 0
                self._fresh = False
            return
        self._searched = 0
        rest = body[end + len(CLOSE) :]
        call = self._call(body[:end].strip())
        if call is not None:
            out.append(call)
            self._after_call = self._fresh = True
        else:
            out.append(self._space + OPEN + body[: end + len(CLOSE)])
            self._fresh = False
        self._body, self._space = None, ""
        self._pending = rest

    def _call(self, body: str) -> Recovered | None:
        parsed = _parse(body)
        if parsed is None:
            return None
        call = self.scope.call(parsed[0], parsed[1])
        if call.name not in self.scope.known:
            return None
        return call


def merge_text(pieces: list[Piece]) -> list[Piece]:
    """Adjacent text pieces joined, empty ones dropped."""
    out: list[Piece] = []
    for piece in pieces:
        if isinstance(piece, str):
            if not piece:
                continue
            if out and isinstance(out[-1], str):
                out[-1] += piece
                continue
        out.append(piece)
    return out


def call_id(message_id: str, index: int, call: Recovered) -> str:
    """Deterministic: the same response recovers the same ids (streamed or not)."""
    body = jsonio.dumps(call.arguments).decode()
    seed = f"{message_id}:{index}:{call.name}{body}".encode("utf-8", "surrogatepass")
    return "toolu_br" + hashlib.sha256(seed).hexdigest()[:24]


def recover_tool_calls(scope: CallScope, message: dict[str, Any]) -> None:
    """Rewrite ``message`` (already a private copy) in place: text tags -> tool_use blocks."""
    content = message.get("content")
    if not isinstance(content, list):
        return
    if not any(
        isinstance(b, dict) and isinstance(b.get("text"), str) and OPEN in b["text"]
        for b in content
    ):
        return
    message_id = message.get("id")
    mid = message_id if isinstance(message_id, str) else ""
    out: list[Any] = []
    recovered = 0
    for block in content:
        text = block.get("text") if isinstance(block, dict) else None
        if not isinstance(text, str) or block.get("type") != "text" or OPEN not in text:
            out.append(block)
            continue
        scanner = TextScanner(scope)
        pieces = merge_text(scanner.feed(text) + scanner.finish())
        if not any(isinstance(p, Recovered) for p in pieces):
            out.append(block)
            continue
        for piece in pieces:
            if isinstance(piece, str):
                out.append({**block, "text": piece})
                continue
            ident = scope.seal(call_id(mid, recovered, piece), piece)
            out.append(
                {
                    "type": "tool_use",
                    "id": ident,
                    "name": piece.name,
                    "input": piece.arguments,
                }
            )
            recovered += 1
    if recovered:
        message["content"] = out
        if message.get("stop_reason") in RECOVERABLE_STOPS:
            message["stop_reason"] = "tool_use"
