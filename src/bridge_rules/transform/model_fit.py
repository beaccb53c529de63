"""A request made acceptable to its model (``models:``), and thinking signatures marked.

Runs before the name rewrite, on the client's request, whatever the gate says: what a model
accepts is a property of the upstream, not of the agent's tool names. Copy-on-write like the
rest of the outbound path: the input is never mutated.

Which model produced a thinking block travels in the conversation itself: on the way back
the proxy prefixes each thinking block's signature (``redacted_thinking``'s ``data``) with
``brm1~<model>~``, which the client echoes with the block; on the way out the mark is always
taken off again, and decides whether the block is replayed (``thinking.foreign``). A block
without a mark is decided by ``thinking.unknown``. No worker remembers anything.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bridge_rules.modelrules import Decision, ModelTable

MARK = "brm1~"
SEALED: dict[Any, str] = {"thinking": "signature", "redacted_thinking": "data"}
LEFT_OUT = "[a thinking block from another model was left out]"


@dataclass
class Fitted:
    """The request as it goes on, what was changed and by which rule, or why it is refused."""

    payload: Any
    applied: list[tuple[Decision, str]] = field(default_factory=list)
    rejected: str | None = None


def mark(sealed: str, model: str) -> str:
    """``sealed`` (a signature) carrying the model that produced it."""
    if not model or "~" in model or sealed.startswith(MARK):
        return sealed
    return f"{MARK}{model}~{sealed}"


def unmark(sealed: str) -> tuple[str | None, str]:
    """The producing model (None: unmarked) and the signature as the upstream sent it."""
    if not sealed.startswith(MARK):
        return None, sealed
    model, sep, rest = sealed[len(MARK) :].partition("~")
    return (model, rest) if sep else (None, sealed)


def fit(
    table: ModelTable, payload: Any, model: str | None, wire: Callable[[str], str] = str
) -> Fitted:
    """``payload`` for ``model`` under ``table``; never raises on the payload's shape.
    ``wire``: a tool's name as the model will see it (the instruction that replaces a
    forced tool_choice names the tool the way the rewritten ``tools`` do)."""
    if not isinstance(payload, dict):
        return Fitted(payload)
    model = model if model is not None else payload.get("model")
    model = model if isinstance(model, str) else None
    decisions = table.decide(model)
    done = Fitted(dict(payload))
    _tool_choice(done, decisions["tool_choice.forced"], model, wire)
    if done.rejected is not None:
        return done
    _disabled(done, decisions["thinking.disabled"])
    messages = payload.get("messages")
    if isinstance(messages, list):
        _messages(done, messages, decisions, model)
    return done


def _tool_choice(
    done: Fitted, decision: Decision, model: str | None, wire: Callable[[str], str]
) -> None:
    out = done.payload
    choice = out.get("tool_choice")
    if not isinstance(choice, dict) or choice.get("type") not in ("any", "tool"):
        return
    if decision.value == "refuse":
        done.rejected = (
            f"tool_choice {choice.get('type')!r} is not accepted by model {model!r}; "
            f"refused by {decision.where}"
        )
        done.applied.append((decision, "refused the request"))
    elif decision.value == "auto":
        auto: dict[str, Any] = {"type": "auto"}
        if "disable_parallel_tool_use" in choice:
            auto["disable_parallel_tool_use"] = choice["disable_parallel_tool_use"]
        out["tool_choice"] = auto
        name = choice.get("name")
        said = (
            f"You must call the tool `{wire(name)}` in your response."
            if choice.get("type") == "tool" and isinstance(name, str)
            else "You must call one of the provided tools in your response."
        )
        out["system"] = _append_system(out.get("system"), said)
        done.applied.append((decision, f"sent tool_choice auto and told the model: {said}"))


def _append_system(system: Any, text: str) -> Any:
    if system is None or system in ("", []):
        return text
    if isinstance(system, str):
        return f"{system}\n\n{text}"
    if isinstance(system, list):
        return [*system, {"type": "text", "text": text}]
    return system


def _disabled(done: Fitted, decision: Decision) -> None:
    out = done.payload
    thinking = out.get("thinking")
    if decision.value == "keep" or not isinstance(thinking, dict):
        return
    if thinking.get("type") == "disabled":
        out["thinking"] = decision.value
        done.applied.append((decision, f"sent thinking {decision.value} instead of disabled"))


def _messages(
    done: Fitted, messages: list[Any], decisions: dict[str, Decision], model: str | None
) -> None:
    system_rule = decisions["system_in_messages"]
    new: list[Any] = []
    changed = False
    for message in messages:
        if not isinstance(message, dict):
            new.append(message)
            continue
        role = message.get("role")
        if role == "system" and system_rule.value != "keep":
            changed = True
            text = _text_of(message.get("content"))
            if system_rule.value == "fold":
                done.payload["system"] = _append_system(done.payload.get("system"), text)
                done.applied.append((system_rule, "folded a system message into system"))
            else:
                marked = f"<system-message>\n{text}\n</system-message>"
                new.append({"role": "user", "content": [{"type": "text", "text": marked}]})
                done.applied.append((system_rule, "sent a system message as a user turn"))
            continue
        kept = _thinking(done, message, decisions, model) if role == "assistant" else message
        changed = changed or kept is not message
        new.append(kept)
    if changed:
        done.payload["messages"] = new


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [b.get("text") for b in content if isinstance(b, dict)]
        return "\n\n".join(p for p in parts if isinstance(p, str))
    return ""


def _thinking(
    done: Fitted, message: dict[str, Any], decisions: dict[str, Decision], model: str | None
) -> dict[str, Any]:
    """The assistant message with its thinking blocks decided; the message itself when none
    changes. Most assistant messages hold no thinking block: they are looked over once, and
    a list is built only from the first sealed block on (issue 36: this walk runs on every
    request with a ``models:`` entry)."""
    content = message.get("content")
    if not isinstance(content, list):
        return message
    start = _first_sealed(content)
    if start < 0:
        return message
    blocks: list[Any] = content[:start]
    changed = False
    for block in content[start:]:
        kind = block.get("type") if isinstance(block, dict) else None
        key = SEALED[kind] if kind in SEALED_KINDS else None
        sealed = block.get(key) if key is not None else None
        if not isinstance(sealed, str):
            blocks.append(block)
            continue
        producer, original = unmark(sealed)
        rule = decisions["thinking.unknown" if producer is None else "thinking.foreign"]
        if (producer is None or producer != model) and rule.value == "strip":
            changed = True
            what = "unmarked" if producer is None else f"from {producer}"
            done.applied.append((rule, f"left out a thinking block ({what})"))
            continue
        if original is not sealed:
            changed = True
            blocks.append({**block, key: original})
        else:
            blocks.append(block)
    if not changed:
        return message
    if not blocks:
        blocks = [{"type": "text", "text": LEFT_OUT}]
    return {**message, "content": blocks}


SEALED_KINDS = ("thinking", "redacted_thinking")
"""The blocks :data:`SEALED` names, as a tuple: ``in`` compares, so a block whose type is a
list or an object is not one of them, where looking it up in a dict would raise."""


def _first_sealed(content: list[Any]) -> int:
    """Where the first thinking block with a signature stands in ``content`` (-1: none)."""
    for at, block in enumerate(content):
        if isinstance(block, dict):
            kind = block.get("type")
            if kind in SEALED_KINDS and isinstance(block.get(SEALED[kind]), str):
                return at
    return -1
