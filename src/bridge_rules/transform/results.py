"""The result side of argument repair: a stripped pipeline applied to the call's output.

pi-tool-guard strips trailing extractors (``npm test | grep FAIL | head -5``)
from a bash command, runs the rest and applies the extractors to the output.
With the ``pi-tool-guard`` profile the agent runs the stripped command; what
repair removed travels out of band, never in the arguments:

* on the way back, every call whose repair left a
  :class:`~bridge_rules.repair.rules.PipelineNote` is remembered under its
  ``tool_use`` id in a bounded in-memory map (:class:`CallMemory`);
* on the next request, the matching ``tool_result`` gets the removed commands
  applied to its text (:func:`~bridge_rules.repair.extract.run_pipeline`), and the
  ``tool_use`` in history gets the command the model wrote back, so the model
  sees its own call and the output it asked for.

When the map has forgotten the id (evicted, another worker, a restart), or an
extractor is one :mod:`bridge_rules.repair.extract` does not run, the result
passes unchanged. Every later request carries the same history, so the same
result is filtered the same way each time while the id is remembered.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Protocol

from bridge_rules.calls import ToolCall
from bridge_rules.repair.extract import run_pipeline
from bridge_rules.repair.rules import NOTE_KEY, PipelineNote

DEFAULT_SIZE = 4096


class CallSealer(Protocol):
    """What the way back does with a finished call: it may give the call a new id.

    A stream holds a tool block's ``content_block_start`` with its argument deltas when
    :meth:`may_seal` says the call's id may change, and sends the start once
    :meth:`seal` has answered (rebuilt only when the id changed)."""

    def may_seal(self, local_name: str) -> bool:
        """Whether calls to this local tool may get a new id."""
        ...

    def seal(self, call_id: str, call: ToolCall) -> str:
        """The id to send for the call, its input complete and adapted (may be ``call_id``)."""
        ...


class MemorySealer:
    """:class:`CallMemory` as a :class:`CallSealer`: ids never change, calls with a stripped
    pipeline are remembered."""

    def __init__(self, memory: CallMemory) -> None:
        self.memory = memory

    def may_seal(self, local_name: str) -> bool:
        return False

    def seal(self, call_id: str, call: ToolCall) -> str:
        if call.notes:
            self.memory.remember(call_id, call)
        return call_id


class CallMemory:
    """``tool_use`` id -> what repair removed from that call; least recently used goes first."""

    def __init__(self, size: int = DEFAULT_SIZE) -> None:
        self.size = size
        self._notes: OrderedDict[str, PipelineNote] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._notes)

    def remember(self, call_id: Any, call: ToolCall) -> None:
        note = call.notes.get(NOTE_KEY)
        if not isinstance(call_id, str) or not isinstance(note, PipelineNote):
            return
        with self._lock:
            self._notes[call_id] = note
            self._notes.move_to_end(call_id)
            while len(self._notes) > self.size:
                self._notes.popitem(last=False)

    def recall(self, call_id: Any) -> PipelineNote | None:
        if not isinstance(call_id, str):
            return None
        with self._lock:
            note = self._notes.get(call_id)
            if note is not None:
                self._notes.move_to_end(call_id)
            return note


def _filtered(content: Any, note: PipelineNote) -> Any:
    """The result content with the pipeline applied to its text; as it was when it cannot be."""
    if isinstance(content, str):
        out = run_pipeline(note.commands, content)
        return content if out is None else out
    if not isinstance(content, list):
        return content
    texts = [
        i
        for i, b in enumerate(content)
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]
    if not texts:
        return content
    out = run_pipeline(note.commands, "\n".join(content[i]["text"] for i in texts))
    if out is None:
        return content
    first = texts[0]
    return [
        {**b, "text": out} if i == first else b
        for i, b in enumerate(content)
        if i == first or i not in texts
    ]


def _block(block: Any, memory: CallMemory) -> Any:
    if type(block) is not dict:
        return block
    kind = block.get("type")
    if kind == "tool_result":
        note = memory.recall(block.get("tool_use_id"))
        if note is None or "content" not in block:
            return block
        content = _filtered(block["content"], note)
        return block if content is block["content"] else {**block, "content": content}
    if kind == "tool_use":
        note = memory.recall(block.get("id"))
        args = block.get("input")
        if note is None or not isinstance(args, dict) or args.get(note.field) == note.original:
            return block
        return {**block, "input": {**args, note.field: note.original}}
    return block


def apply_results(payload: Any, memory: CallMemory) -> Any:
    """The request body with remembered pipelines applied (copy-on-write; input untouched)."""
    if not len(memory) or not isinstance(payload, dict):
        return payload
    messages = payload.get("messages")
    if not isinstance(messages, list):
        return payload
    new_messages: list[Any] | None = None
    for i, message in enumerate(messages):
        content = message.get("content") if type(message) is dict else None
        if type(content) is not list:
            continue
        new_content = [_block(b, memory) for b in content]
        if any(a is not b for a, b in zip(new_content, content, strict=True)):
            if new_messages is None:
                new_messages = list(messages)
            new_messages[i] = {**message, "content": new_content}
    return payload if new_messages is None else {**payload, "messages": new_messages}
