"""The second pass's recovery job: ``<tool_call>`` tags in a stream's text blocks
(``text.recover_tool_calls``) become ``tool_use`` blocks.

A text block's deltas go through the shared :class:`~bridge_rules.transform.recover.TextScanner`;
a recovered call is emitted as its own block (start, one ``input_json_delta`` with the
whole input, stop), the text around it becomes separate text blocks, and a call the policy
denies becomes what ``on_denied`` makes of it.
"""

from __future__ import annotations

from typing import Any

from bridge_rules import jsonio
from bridge_rules.transform.framing import Event, Piece
from bridge_rules.transform.recover import Recovered, call_id, merge_text
from bridge_rules.transform.second_policy import PolicyPass
from bridge_rules.transform.second_state import HeldText


class RecoveryPass(PolicyPass):
    """Text blocks scanned for ``<tool_call>`` tags, released as text and calls."""

    def _plain_text(self, raw: bytes) -> bool:
        """Prose in a text block with nothing held goes out as it came, unparsed.

        Only when the one open text block keeps its index, the delta cannot hold a ``<``
        (also not escaped), and the scanner holds nothing: then the scanner would release
        the delta's text unchanged, so parsing it would change nothing.
        """
        if len(self._text) != 1 or b'"text_delta"' not in raw:
            return False
        if b"<" in raw or b"\\u003" in raw or b"message_" in raw:
            return False
        ((up, block),) = self._text.items()
        if block.out != up or not block.scanner.plain:
            return False
        return b'"index":%d,' % up in raw or b'"index":%d}' % up in raw

    def _text_delta(
        self, event: Event, data: dict[str, Any], block: HeldText, index: int, out: list[Piece]
    ) -> None:
        delta = data.get("delta")
        if (
            isinstance(delta, dict)
            and delta.get("type") == "text_delta"
            and isinstance(delta.get("text"), str)
        ):
            pieces = block.scanner.feed(delta["text"])
            self._emit(block, index, pieces, (event, data), out)
            return
        # citations and other deltas: keep them in the text segment being written
        self._open_segment(block, index, out)
        assert block.out is not None
        out.append(self._renumbered(event, data, block.out))

    def _text_stop(
        self, event: Event, data: dict[str, Any], block: HeldText, index: int, out: list[Piece]
    ) -> None:
        self._emit(block, index, block.scanner.finish(), None, out)
        if not block.emitted:  # an empty text block: keep it, as the message keeps it
            self._open_segment(block, index, out)
        if block.out is not None:
            out.append(self._renumbered(event, data, block.out))

    def _emit(
        self,
        block: HeldText,
        index: int,
        pieces: list[Any],
        source: tuple[Event, dict[str, Any]] | None,
        out: list[Piece],
    ) -> None:
        for piece in merge_text(pieces):
            block.emitted = True
            if isinstance(piece, Recovered):
                self._close_segment(block, out)
                self._tool_use(piece, out)
                continue
            self._open_segment(block, index, out)
            if source is not None:
                event, data = source
                delta = data["delta"]
                if delta["text"] == piece and data.get("index") == block.out:
                    out.append(event)
                else:
                    new = {**data, "index": block.out, "delta": {**delta, "text": piece}}
                    out.append(event.with_data(new))
            else:
                self._text_event(block, index, piece, out)

    def _open_segment(self, block: HeldText, index: int, out: list[Piece]) -> None:
        if block.out is not None:
            return
        block.out = self._next
        self._next += 1
        content = block.data.get("content_block")
        content = {**content, "text": ""} if isinstance(content, dict) else content
        if block.out == index and content == block.data.get("content_block"):
            out.append(block.start)
            return
        new = {**block.data, "index": block.out, "content_block": content}
        out.append(block.start.with_data(new))

    def _close_segment(self, block: HeldText, out: list[Piece]) -> None:
        if block.out is None:
            return
        stop = {"type": "content_block_stop", "index": block.out}
        out.append(self._made("content_block_stop", stop))
        block.out = None

    def _text_event(self, block: HeldText, index: int, text: str, out: list[Piece]) -> None:
        self._open_segment(block, index, out)
        delta = {
            "type": "content_block_delta",
            "index": block.out,
            "delta": {"type": "text_delta", "text": text},
        }
        out.append(self._made("content_block_delta", delta))

    def _tool_use(self, call: Recovered, out: list[Piece]) -> None:
        """A recovered call as its own block, or, when the policy denies its tool, what
        ``on_denied`` makes of it: the same blocks a message answer gets."""
        found = self.policy.check(call.name)
        action = None if found is None else self.policy.action(found)
        if action == "error" and self.policy.refusal is not None:
            self._refuse(self.policy.refusal, out)
            return
        ident = call_id(self.message_id, self.recovered, call)
        self.recovered += 1
        if action == "drop":
            self._refused += 1
            return
        index = self._next
        self._next += 1
        if found is not None and action == "text":
            self._refused += 1
            self._text_block(index, self.policy.text(found), out)
            return
        ident = self.scope.seal(ident, call)
        block = {"type": "tool_use", "id": ident, "name": call.name, "input": {}}
        self._recovered_out += 1
        partial = jsonio.dumps(call.arguments).decode()
        self._whole(index, block, {"type": "input_json_delta", "partial_json": partial}, out)
