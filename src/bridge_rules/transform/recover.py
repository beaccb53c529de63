"""Recover a tool call a model wrote as text: ``<tool_call>{"name": ..., ...}</tool_call>``.

Some models (pi-flows saw it after ``max_tokens`` truncation and on weaker
gateways) print the call instead of emitting a ``tool_use`` block. Turned on by
``text.recover_tool_calls``; only calls that map to a registered local tool are
recovered, so prose that merely mentions the tag is left alone.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from bridge_rules.calls import inbound_call
from bridge_rules.runtime import Runtime

OPEN = "<tool_call>"
CLOSE = "</tool_call>"
_MAX_BODY = 1 << 20


def _parse(body: str) -> tuple[str, dict[str, Any]] | None:
    if len(body) > _MAX_BODY:
        return None
    try:
        obj = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(obj, dict) or not isinstance(obj.get("name"), str):
        return None
    args = obj.get("arguments", obj.get("args", obj))
    if isinstance(args, str):
        try:
            args = orjson.loads(args)
        except orjson.JSONDecodeError:
            return None
    if not isinstance(args, dict):
        return None
    if args is obj:
        args = {k: v for k, v in obj.items() if k != "name"}
    return obj["name"], args


def _extract(
    rt: Runtime, text: str, registered: tuple[str, ...] | None, known: set[str]
) -> tuple[str, list[tuple[str, Any]]]:
    """The text with recovered tags removed, and the (local name, input) calls found."""
    calls: list[tuple[str, Any]] = []
    kept: list[str] = []
    pos = 0
    while True:
        start = text.find(OPEN, pos)
        if start < 0:
            break
        end = text.find(CLOSE, start + len(OPEN))
        if end < 0:
            break
        parsed = _parse(text[start + len(OPEN) : end].strip())
        after = end + len(CLOSE)
        if parsed is not None:
            call = inbound_call(rt, parsed[0], parsed[1], registered)
            if call.name in known:
                kept.append(text[pos:start])
                calls.append((call.name, call.arguments))
                pos = after
                continue
        kept.append(text[pos:after])
        pos = after
    kept.append(text[pos:])
    return "".join(kept), calls


def _id(message: dict[str, Any], index: int, body: str) -> str:
    seed = f"{message.get('id', '')}:{index}:{body}".encode("utf-8", "surrogatepass")
    return "toolu_br" + hashlib.sha256(seed).hexdigest()[:24]


def recover_tool_calls(
    rt: Runtime, message: dict[str, Any], registered: tuple[str, ...] | None
) -> None:
    """Rewrite ``message`` (already a private copy) in place: text tags -> tool_use blocks."""
    content = message.get("content")
    if not isinstance(content, list):
        return
    if not any(
        isinstance(b, dict) and isinstance(b.get("text"), str) and OPEN in b["text"]
        for b in content
    ):
        return
    known = set(rt.known_locals if registered is None else registered)
    out: list[Any] = []
    recovered = 0
    for block in content:
        text = block.get("text") if isinstance(block, dict) else None
        if not isinstance(text, str) or block.get("type") != "text" or OPEN not in text:
            out.append(block)
            continue
        rest, calls = _extract(rt, text, registered, known)
        if not calls:
            out.append(block)
            continue
        if rest.strip():
            out.append({**block, "text": rest.strip()})
        for name, args in calls:
            body = orjson.dumps(args).decode()
            out.append(
                {
                    "type": "tool_use",
                    "id": _id(message, recovered, name + body),
                    "name": name,
                    "input": args,
                }
            )
            recovered += 1
    if recovered:
        message["content"] = out
        if message.get("stop_reason") in ("end_turn", "stop_sequence"):
            message["stop_reason"] = "tool_use"
