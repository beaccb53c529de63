"""The result side of argument repair: a stripped pipeline carried in the call's own id.

pi-tool-guard strips trailing extractors (``npm test | grep FAIL | head -5``)
from a bash command, runs the rest and applies the extractors to the output.
With the ``pi-tool-guard`` profile the agent runs the stripped command and the
proxy applies what was stripped, on the next request, to the ``tool_result``.
Nothing of it is remembered by a worker:

* on the way back, a call whose repair left a
  :class:`~bridge_rules.repair.rules.PipelineNote` gets its ``tool_use`` id sealed
  (:mod:`bridge_rules.sealing`): the id carries the note, authenticated with the
  deployment's key. The agent echoes that id in its history and in the result;
* on the way out, every sealed id is opened and restored byte for byte; the
  ``tool_use`` gets back the command the model wrote, and the ``tool_result`` gets
  the stripped stages applied to its text (:func:`~bridge_rules.repair.extract.run_pipeline`),
  so the model sees its own call and exactly the output that call would have given.

Any worker of any replica that has the same rules and key gives the same answer.
Without a key (:attr:`Runtime.sealer <bridge_rules.runtime.Runtime.sealer>` None) a
pipeline is not stripped at all (:func:`bridge_rules.calls.inbound_call`): the agent
runs the command as the model wrote it.
"""

from __future__ import annotations

from typing import Any, Protocol

from bridge_rules import jsonio
from bridge_rules.calls import ToolCall
from bridge_rules.repair.extract import run_pipeline
from bridge_rules.repair.rules import NOTE_KEY, PipelineNote
from bridge_rules.runtime import Runtime
from bridge_rules.sealing import Sealer, may_be_sealed


class CallSealer(Protocol):
    """What the response rewriters ask when a call is complete."""

    def may_seal(self, local_name: str) -> bool:
        """Whether calls of this tool may get a new id (a stream then holds the block's
        ``content_block_start`` until the call's input is complete)."""
        ...

    def seal(self, call_id: str, call: ToolCall) -> str:
        """The id to send the agent for this call (``call_id`` when nothing is carried)."""
        ...


def _encode(note: PipelineNote) -> bytes:
    return jsonio.dumps([note.field, note.original, list(note.commands)])


def _decode(payload: bytes) -> PipelineNote | None:
    try:
        value = jsonio.loads(payload)
    except jsonio.JSONDecodeError:
        return None
    match value:
        case [str(field), str(original), list(commands)] if all(
            isinstance(c, str) for c in commands
        ):
            return PipelineNote(field, original, tuple(commands))
    return None


class PipelineSeals:
    """The :class:`CallSealer` of a runtime whose repairs strip pipelines, and its opener."""

    __slots__ = ("_sealer", "_tools")

    def __init__(self, sealer: Sealer, tools: frozenset[str]) -> None:
        self._sealer = sealer
        self._tools = tools

    def may_seal(self, local_name: str) -> bool:
        return local_name in self._tools

    def seal(self, call_id: str, call: ToolCall) -> str:
        note = call.notes.get(NOTE_KEY)
        if not isinstance(note, PipelineNote):
            return call_id
        return self._sealer.seal(call_id, _encode(note))

    def open(self, value: object) -> tuple[str, PipelineNote] | None:
        """(original id, note) of an id :meth:`seal` made; None for anything else."""
        if not may_be_sealed(value):
            return None
        opened = self._sealer.open(value)
        if opened is None:
            return None
        note = _decode(opened[1])
        return None if note is None else (opened[0], note)

    def tool_use(self, block: dict[str, Any]) -> dict[str, Any]:
        """A history ``tool_use`` with its id restored and the model's own command back."""
        opened = self.open(block.get("id"))
        if opened is None:
            return block
        call_id, note = opened
        new = {**block, "id": call_id}
        args = block.get("input")
        if isinstance(args, dict) and args.get(note.field) != note.original:
            new["input"] = {**args, note.field: note.original}
        return new

    def tool_result(self, block: dict[str, Any]) -> dict[str, Any]:
        """A ``tool_result`` with its id restored and the stripped stages applied."""
        opened = self.open(block.get("tool_use_id"))
        if opened is None:
            return block
        call_id, note = opened
        new = {**block, "tool_use_id": call_id}
        if "content" in block:
            new["content"] = _filtered(block["content"], note)
        return new


def seals(rt: Runtime) -> PipelineSeals | None:
    """The runtime's seals, when it strips pipelines and has a key to carry them with."""
    if rt.sealer is None or not rt.stripping_tools:
        return None
    return PipelineSeals(rt.sealer, rt.stripping_tools)


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
