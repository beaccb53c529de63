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

import base64
import binascii
from collections.abc import Mapping
from typing import Any, NamedTuple, Protocol

from bridge_rules import jsonio
from bridge_rules.bindings.output import OutputPlan
from bridge_rules.calls import OUTPUT_NOTE, ToolCall
from bridge_rules.repair.extract import run_pipeline
from bridge_rules.repair.rules import NOTE_KEY, PipelineNote
from bridge_rules.runtime import Runtime
from bridge_rules.sealing import MAX_SEALED_CHARS, Sealer, may_be_sealed


class CallSealer(Protocol):
    """What the response rewriters ask when a call is complete."""

    def may_seal(self, local_name: str) -> bool:
        """Whether calls of this tool may get a new id (a stream then holds the block's
        ``content_block_start`` until the call's input is complete)."""
        ...

    def seal(self, call_id: str, call: ToolCall) -> str:
        """The id to send the agent for this call (``call_id`` when nothing is carried)."""
        ...


class Opened(NamedTuple):
    """What a pipeline seal binds: the call it was made for, and what to undo on it."""

    call_id: str
    tool: str
    """The tool's local name, as the agent's ``tool_use`` names it."""
    ran: str | None
    """The command the agent was given (the field's value with the stages stripped)."""
    note: PipelineNote


def _encode(call: ToolCall, note: PipelineNote) -> bytes:
    """The sealed payload. The tag covers it, so the seal is bound to the tool's name and
    the command the agent runs, as well as the call's id (which the tag covers itself)."""
    args = call.arguments
    ran = args.get(note.field) if isinstance(args, dict) else None
    ran = ran if isinstance(ran, str) else None
    return jsonio.dumps([call.name, ran, note.field, note.original, list(note.commands)])


def _decode(call_id: str, payload: bytes) -> Opened | None:
    try:
        value = jsonio.loads(payload)
    except jsonio.JSONDecodeError:
        return None
    match value:
        case [str(tool), (str() | None) as ran, str(field), str(original), list(commands)] if all(
            isinstance(c, str) for c in commands
        ):
            return Opened(call_id, tool, ran, PipelineNote(field, original, tuple(commands)))
    return None


class PipelineSeals:
    """The :class:`CallSealer` of a runtime whose repairs strip pipelines, and its opener."""

    __slots__ = ("_sealer", "_tools", "refused")

    def __init__(self, sealer: Sealer, tools: frozenset[str]) -> None:
        self._sealer = sealer
        self._tools = tools
        self.refused: set[str] = set()
        """Genuine seals this request found on a call they were not made for: the results
        that answer them stay as they are too (one object per request, as its rewriter)."""

    def may_seal(self, local_name: str) -> bool:
        return local_name in self._tools

    def seal(self, call_id: str, call: ToolCall) -> str:
        note = call.notes.get(NOTE_KEY)
        if not isinstance(note, PipelineNote):
            return call_id
        return self._sealer.seal(call_id, _encode(call, note))

    def open(self, value: object) -> Opened | None:
        """What an id :meth:`seal` made binds; None for anything else."""
        if not may_be_sealed(value):
            return None
        opened = self._sealer.open(value)
        return None if opened is None else _decode(*opened)

    def tool_use(self, block: dict[str, Any]) -> dict[str, Any]:
        """A history ``tool_use`` with its id restored and the model's own command back.

        Only on the call the seal was made for: the same tool, given the same command. A
        seal moved onto another tool's call, or another call's, stays there as it is (an
        opaque id), and so does the ``tool_result`` that answers it later in the request."""
        opened = self.open(block.get("id"))
        if opened is None:
            return block
        call_id, tool, ran, note = opened
        args = block.get("input")
        given = args.get(note.field) if isinstance(args, dict) else None
        if block.get("name") != tool or given != ran:
            self.refused.add(block["id"])
            return block
        new = {**block, "id": call_id}
        if isinstance(args, dict) and args.get(note.field) != note.original:
            new["input"] = {**args, note.field: note.original}
        return new

    def tool_result(self, block: dict[str, Any]) -> dict[str, Any]:
        """A ``tool_result`` with its id restored and the stripped stages applied; as it is
        when its call, earlier in the request, holds the seal but is not the sealed call."""
        value = block.get("tool_use_id")
        opened = None if isinstance(value, str) and value in self.refused else self.open(value)
        if opened is None:
            return block
        call_id, note = opened.call_id, opened.note
        new = {**block, "tool_use_id": call_id}
        if "content" in block:
            new["content"] = _filtered(block["content"], note)
        return new


OUTPUT_MARK = "_bro"
_B32 = frozenset("abcdefghijklmnopqrstuvwxyz234567")


def _tag(call_id: str, local: str, args: Mapping[str, Any]) -> str:
    data = base64.b32encode(jsonio.dumps([local, args])).decode("ascii")
    return f"{call_id}{OUTPUT_MARK}{data.rstrip('=').lower()}"


def _untag(value: object) -> tuple[str, str, dict[str, Any]] | None:
    """(original id, local tool, arguments) of an id :func:`_tag` made; None for any other."""
    if not isinstance(value, str) or len(value) > MAX_SEALED_CHARS:
        return None
    at = value.rfind(OUTPUT_MARK)
    data = value[at + len(OUTPUT_MARK) :]
    if at < 0 or not data or not _B32.issuperset(data):
        return None
    try:
        raw = base64.b32decode(data.upper() + "=" * (-len(data) % 8))
        decoded = jsonio.loads(raw)
    except (binascii.Error, ValueError):
        return None
    match decoded:
        case [str(local), dict(args)]:
            return value[:at], local, args
    return None


class CallSeals:
    """The :class:`CallSealer` of a runtime, and its opener on the next request: pipelines
    stripped by repair (authenticated, :class:`PipelineSeals`) and the arguments a
    binding's ``output:`` operations read, carried in the call's id.

    An output tag is ``<id>_bro<base32 of [local tool, arguments]>``, unauthenticated: it
    only chooses how a result the agent made is shown to the model, which the client and
    the upstream could do themselves, and it opens only for a tool whose binding has
    output operations. The pipeline seal goes around it, so it is opened first.
    """

    __slots__ = ("_outputs", "_pipelines")

    def __init__(self, pipelines: PipelineSeals | None, outputs: Mapping[str, OutputPlan]) -> None:
        self._pipelines = pipelines
        self._outputs = outputs

    def may_seal(self, local_name: str) -> bool:
        pipelines = self._pipelines
        return local_name in self._outputs or (
            pipelines is not None and pipelines.may_seal(local_name)
        )

    def seal(self, call_id: str, call: ToolCall) -> str:
        args = call.notes.get(OUTPUT_NOTE)
        if isinstance(args, dict) and call.name in self._outputs:
            call_id = _tag(call_id, call.name, args)
        return call_id if self._pipelines is None else self._pipelines.seal(call_id, call)

    def refusals(self) -> int:
        """How many seals this request found on calls they were not made for, so far."""
        return 0 if self._pipelines is None else len(self._pipelines.refused)

    def tool_use(self, block: dict[str, Any]) -> dict[str, Any]:
        """A history ``tool_use`` as the model made it: its id and command restored."""
        if self._pipelines is not None:
            block = self._pipelines.tool_use(block)
        opened = self._open(block.get("id"))
        return block if opened is None else {**block, "id": opened[0]}

    def tool_result(self, block: dict[str, Any]) -> dict[str, Any]:
        """A ``tool_result`` with its id restored and the stripped stages, then the binding's
        output operations, applied."""
        if self._pipelines is not None:
            block = self._pipelines.tool_result(block)
        opened = self._open(block.get("tool_use_id"))
        if opened is None:
            return block
        call_id, plan, args = opened
        new = {**block, "tool_use_id": call_id}
        if "content" in block:
            new["content"] = plan.reshape(block["content"], block.get("is_error") is True, args)
        return new

    def _open(self, value: object) -> tuple[str, OutputPlan, dict[str, Any]] | None:
        if not self._outputs:
            return None
        opened = _untag(value)
        if opened is None:
            return None
        call_id, local, args = opened
        plan = self._outputs.get(local)
        return None if plan is None else (call_id, plan, args)


def seals(rt: Runtime) -> CallSeals | None:
    """The runtime's seals: pipelines when it strips them and has a key to carry them with,
    output arguments when a binding reshapes results; None when there is nothing to carry."""
    pipelines = None
    if rt.sealer is not None and rt.stripping_tools:
        pipelines = PipelineSeals(rt.sealer, rt.stripping_tools)
    if pipelines is None and not rt.outputs:
        return None
    return CallSeals(pipelines, rt.outputs)


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
