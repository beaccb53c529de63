"""The CLI's stream events turned into one Anthropic answer, in SSE or as JSON.

With ``--include-partial-messages`` the CLI hands over the raw Messages API events of
each model call it makes. One client request is one CLI turn; that is one model call
unless the policy lets the CLI run some tools itself, in which case it calls the model
again after each. The calls are merged into one message here: the first
``message_start`` opens it, blocks are renumbered, the blocks of tools the CLI ran
(and so will not come back to the client) are left out, and the last call's
``message_delta`` closes it with the usage of all the calls: each call's ``message_start``
usage updated by its ``message_delta`` (whose counts are the call's totals), summed key by
key (input, output, cache writes and reads, ``server_tool_use``). The ``message_start``
the client gets is the first call's; a client reads the totals from the
``message_delta``, as the SDKs do.

Tool names are given back as wire names (the CLI shows a non-``mcp__`` tool as
``mcp__bridge__<name>``); the proxy's rules then map them to the client's names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bridge_rules import jsonio

Event = dict[str, Any]


class Bridge:
    def __init__(self, wire_name: Callable[[str], str], ran: Callable[[str], bool]) -> None:
        self._wire_name = wire_name
        self._ran = ran  # the CLI runs this tool itself (policy): its block stays inside
        self._started = False
        self._index: dict[int, int] = {}  # this call's block index -> the client's
        self._skipped: set[int] = set()
        self._next = 0
        self._held: list[Event] = []
        self._usage: list[dict[str, Any]] = []  # each model call's, as the endpoint said
        self.proposed = 0
        """tool_use blocks that go to the client, in the current model call."""
        self.calls: dict[str, str] = {}
        """The id of each call that goes to the client -> its name as the CLI knows it."""
        self.call_ended = False
        """The current model call sent its ``message_stop``."""

    def feed(self, event: Event) -> list[Event]:
        """The events to send the client for one event of the CLI (often itself)."""
        kind = event.get("type")
        if kind == "message_start":
            usage = (event.get("message") or {}).get("usage")
            self._usage.append(dict(usage) if isinstance(usage, dict) else {})
            self._index, self._skipped = {}, set()
            self.proposed, self.call_ended, self._held = 0, False, []
            if self._started:
                return []
            self._started = True
            return [event]
        if kind == "content_block_start":
            return self._block_start(event)
        if kind in ("content_block_delta", "content_block_stop"):
            at = event.get("index")
            if at in self._skipped or at not in self._index:
                return []
            return [{**event, "index": self._index[at]}]
        if kind == "message_delta":
            usage = event.get("usage")
            if self._usage and isinstance(usage, dict):
                self._usage[-1].update(usage)
            self._held = [event]
            return []
        if kind == "message_stop":
            self.call_ended = True
            self._held.append(event)
            return []
        return []  # ping and anything new: not part of the answer

    def _block_start(self, event: Event) -> list[Event]:
        at = event.get("index")
        block = event.get("content_block") or {}
        if not isinstance(at, int):
            return []
        if block.get("type") == "tool_use":
            if self._ran(str(block.get("name"))):
                self._skipped.add(at)
                return []
            self.proposed += 1
            self.calls[str(block.get("id"))] = str(block.get("name"))
            block = {**block, "name": self._wire_name(str(block.get("name")))}
        self._index[at] = self._next
        self._next += 1
        return [{**event, "index": self._index[at], "content_block": block}]

    def finish(self) -> list[Event]:
        """The closing events: the last call's ``message_delta`` (with every call's usage
        summed) and ``message_stop``."""
        out: list[Event] = []
        total = summed(self._usage)
        for held in self._held:
            if held.get("type") == "message_delta":
                usage = {**(held.get("usage") or {}), **total}
                held = {**held, "usage": usage}  # noqa: PLW2901 - the copy that goes out
            out.append(held)
        if not any(e.get("type") == "message_stop" for e in out):
            out.append({"type": "message_stop"})
        return out

    @property
    def started(self) -> bool:
        return self._started


def summed(usages: list[dict[str, Any]]) -> dict[str, Any]:
    """The usages added key by key: counts summed, nested objects (``server_tool_use``,
    ``cache_creation``) likewise, anything else (``service_tier``) the last one given."""
    total: dict[str, Any] = {}
    for usage in usages:
        for key, value in usage.items():
            if value is None:
                continue
            have = total.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                total[key] = (have if isinstance(have, int) else 0) + value
            elif isinstance(value, dict):
                total[key] = summed([have if isinstance(have, dict) else {}, value])
            else:
                total[key] = value
    return total


def sse(event: Event) -> bytes:
    return (
        b"event: " + str(event.get("type")).encode() + b"\ndata: " + jsonio.dumps(event) + b"\n\n"
    )


def assemble(events: list[Event]) -> dict[str, Any]:
    """The message a client gets without streaming: the same events, folded."""
    message: dict[str, Any] = {}
    blocks: list[dict[str, Any]] = []
    partial: dict[int, str] = {}
    for event in events:
        kind = event.get("type")
        if kind == "message_start":
            message = {**event.get("message", {}), "content": blocks}
        elif kind == "content_block_start":
            blocks.append(dict(event.get("content_block") or {}))
        elif kind == "content_block_delta":
            _apply(blocks[event["index"]], event.get("delta") or {}, partial, event["index"])
        elif kind == "content_block_stop" and event["index"] in partial:
            raw = partial.pop(event["index"])
            blocks[event["index"]]["input"] = jsonio.loads(raw) if raw.strip() else {}
        elif kind == "message_delta":
            message.update(event.get("delta") or {})
            message["usage"] = {**message.get("usage", {}), **(event.get("usage") or {})}
    return message


def _apply(block: dict[str, Any], delta: dict[str, Any], partial: dict[int, str], at: int) -> None:
    kind = delta.get("type")
    if kind == "text_delta":
        block["text"] = block.get("text", "") + delta.get("text", "")
    elif kind == "thinking_delta":
        block["thinking"] = block.get("thinking", "") + delta.get("thinking", "")
    elif kind == "signature_delta":
        block["signature"] = delta.get("signature", "")
    elif kind == "input_json_delta":
        partial[at] = partial.get(at, "") + delta.get("partial_json", "")
