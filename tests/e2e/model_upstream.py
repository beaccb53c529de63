"""A fake Anthropic upstream that answers 400 exactly where the 5.x models do.

The constraints are written here from the reference notes (model-wire, Nov 2026: the
model-wire table of wire changes), not from bridge-rules' ``models`` profile, so a test that
passes through it checks the profile against an independent statement of what the API
refuses. Each answer's thinking block carries a signature bound to the model that produced
it, as the real API's are; a block replayed to another model is refused the way the API
refuses it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from fake_upstream import FakeUpstream, Recorded, Script, _Handler, message, sse_events

FORCED_REFUSED = {"claude-opus-5-5", "claude-sonnet-5-5", "claude-fable-5", "claude-fable-5-1"}
"""A forced tool_choice (``any``/``tool``) is a 400 on these (model-wire 5.3, >= 4 threads)."""
DISABLED_REFUSED = {"claude-opus-5-5", "claude-sonnet-5-5"}
"""``thinking: {"type": "disabled"}``: rejected on Opus 5.5; Sonnet 5.5's lowest setting is
``between_tools`` (model-wire 5.3)."""
SYSTEM_ROLE_OK = {
    "claude-fable-5",
    "claude-fable-5-1",
    "claude-opus-4-8",
    "claude-opus-5",
    "claude-opus-5-5",
    "claude-sonnet-5-5",
    "claude-haiku-5-5",
}
"""Mid-conversation ``role: system`` accepted (not on Sonnet 5); never as the first message."""
BOUND_THINKING = {
    "claude-opus-5-5",
    "claude-sonnet-5-5",
    "claude-haiku-5-5",
    "claude-fable-5",
    "claude-fable-5-1",
}
"""Thinking blocks bound to the model that produced them: another's is 'Invalid signature'."""

FORCED_ERROR = "tool_choice: type tool and any are not supported for this model"
SIGNATURE_ERROR = "Invalid signature in thinking block"


def signature(model: str, thinking: str) -> str:
    return "sig" + hashlib.sha256(f"{model}\0{thinking}".encode()).hexdigest()[:32]


def refusal(payload: dict[str, Any]) -> str | None:
    """Why the real API would answer this request 400 (None: it accepts it)."""
    model = str(payload.get("model"))
    choice = payload.get("tool_choice")
    forced = isinstance(choice, dict) and choice.get("type") in ("any", "tool")
    if forced and model in FORCED_REFUSED:
        return FORCED_ERROR
    thinking = payload.get("thinking")
    disabled = isinstance(thinking, dict) and thinking.get("type") == "disabled"
    if disabled and model in DISABLED_REFUSED:
        return f"thinking.type: 'disabled' is not supported for {model}"
    if thinking is not None and thinking.get("type") not in (
        "enabled",
        "disabled",
        "adaptive",
        "between_tools",
    ):
        return "thinking.type: unknown"
    messages = payload.get("messages") or []
    for index, msg in enumerate(messages):
        if msg.get("role") == "system":
            if index == 0:
                return "messages.0.role: the first message must not be system; use `system`"
            if model not in SYSTEM_ROLE_OK:
                return f"messages.{index}.role: unexpected value 'system'"
        elif msg.get("role") not in ("user", "assistant"):
            return f"messages.{index}.role: unexpected value"
        if msg.get("role") == "assistant" and isinstance(msg.get("content"), list):
            for block in msg["content"]:
                if isinstance(block, dict) and block.get("type") == "thinking":
                    want = signature(model, block.get("thinking", ""))
                    if model in BOUND_THINKING and block.get("signature") != want:
                        return f"messages.{index}.content: {SIGNATURE_ERROR}"
    return None


def thinking_reply(payload: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    """``base`` with a thinking block first, signed for the model that answers."""
    model = str(base.get("model"))
    said = f"thinking of {model} at turn {len(payload.get('messages') or [])}"
    block = {"type": "thinking", "thinking": said, "signature": signature(model, said)}
    return {**base, "content": [block, *base["content"]]}


def thinking_events(payload: dict[str, Any], events: list[bytes]) -> list[bytes]:
    """``events`` with a thinking block at index 0 (signature as a ``signature_delta``),
    signed for the model ``message_start`` names."""
    start = json.loads(events[0].decode().partition("data: ")[2])
    model = str(start["message"]["model"])
    said = f"thinking of {model} at turn {len(payload.get('messages') or [])}"

    def ev(name: str, data: dict[str, Any]) -> bytes:
        return f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n".encode()

    shifted = []
    for raw in events[1:]:
        text = raw.decode()
        head, _, data = text.partition("data: ")
        event = json.loads(data)
        if "index" in event:
            event["index"] += 1
        shifted.append(f"{head}data: {json.dumps(event)}\n\n".encode())
    block = [
        ev(
            "content_block_start",
            {"index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
        ),
        ev(
            "content_block_delta",
            {"index": 0, "delta": {"type": "thinking_delta", "thinking": said}},
        ),
        ev(
            "content_block_delta",
            {"index": 0, "delta": {"type": "signature_delta", "signature": signature(model, said)}},
        ),
        ev("content_block_stop", {"index": 0}),
    ]
    return [events[0], *block, *shifted]


def _results(payload: dict[str, Any]) -> int:
    return sum(
        1
        for m in payload.get("messages") or []
        if m.get("role") == "user" and isinstance(m.get("content"), list)
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_result"
    )


class ModelUpstream(FakeUpstream):
    """:class:`FakeUpstream` that refuses what each model refuses, and thinks when asked."""

    def __init__(self) -> None:
        super().__init__(_ModelHandler)
        self.refused: list[str] = []
        self.always_think = False
        """Answer with a thinking block whether or not the request asked (Opus 5.5 and Fable
        think always)."""
        self.answer_as: str | None = None
        """The model that answers (a server-side fallback answers as another model)."""
        self.turns: list[list[dict[str, Any]]] = []
        """The calls of each turn, by the number of tool results in the request's history (an
        agent may merge its assistant turns, Claude Code does): a session of several tool
        turns, decided from the request alone (past the list, a tool result is answered with
        text, as :class:`FakeUpstream` answers it)."""


class _ModelHandler(_Handler):
    server: ModelUpstream

    def _handle(self) -> None:
        if self.command != "POST" or self.path.split("?")[0] != "/v1/messages":
            return super()._handle()
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        rec = Recorded(self.command, "/v1/messages", "", list(self.headers.items()), body)
        payload = json.loads(body)
        why = refusal(payload)
        with self.server.lock:
            self.server.requests.append(rec)
            if why is not None:
                self.server.refused.append(why)
        if why is not None:
            error = {"type": "error", "error": {"type": "invalid_request_error", "message": why}}
            self._send(400, "application/json", json.dumps(error).encode())
            return None
        script = self.server.script
        turn = _results(payload)
        basis = payload
        if payload.get("tools") and turn < len(self.server.turns):
            script = Script(tool_calls=self.server.turns[turn], lead_text=script.lead_text)
            basis = {**payload, "messages": []}  # the turn's calls, whatever came before
        if self.server.answer_as is not None:
            basis = {**basis, "model": self.server.answer_as}
        asked = payload.get("thinking")
        asked_type = asked.get("type") if isinstance(asked, dict) else None
        thinks = self.server.always_think or asked_type in ("enabled", "adaptive", "between_tools")
        unique = f"toolu_t{turn}_".encode()  # tool ids never repeat across turns
        if payload.get("stream"):
            events = [e.replace(b"toolu_fake", unique) for e in sse_events(basis, script)]
            self._stream(thinking_events(payload, events) if thinks else events)
        else:
            reply = json.loads(
                json.dumps(message(basis, script)).replace("toolu_fake", unique.decode())
            )
            reply = thinking_reply(payload, reply) if thinks else reply
            self._send(200, "application/json", json.dumps(reply).encode())
        return None

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _handle
