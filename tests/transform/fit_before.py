"""The model fit as it was before issue 36's cost work (main at 7da28e3), frozen as the
oracle of ``test_fit_skip.py``: ``fit`` and ``fit_body`` exactly as they were, so the new
code is checked against the old code's answers, not its own assumptions. Do not edit."""

# ruff: noqa
# mypy: ignore-errors
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
    content = message.get("content")
    if not isinstance(content, list):
        return message
    blocks: list[Any] = []
    changed = False
    for block in content:
        key = SEALED.get(block.get("type")) if isinstance(block, dict) else None
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


# ---- turn.fit_body, as it was
from bridge_rules import jsonio


def fit_body(
    rt: Runtime, body: bytes, model: str | None
) -> tuple[Fitted | None, str | None, bytes]:
    """``body`` made acceptable to its model (``models:``): what changed (None: nothing),
    the model to mark the answer's thinking with, and the body to rewrite further. Parses
    only when a ``models:`` entry could change something or the body carries a mark."""
    table = rt.rules.models
    if not table.active and MARK.encode() not in body:
        return None, None, body
    payload = jsonio.loads(body)
    done = fit(table, payload, model, rt.outbound_name)
    asked = model if model is not None else _model_of(payload)
    foreign = table.decide(asked)["thinking.foreign"] if table.marks and asked else None
    marks = asked if foreign is not None and foreign.setting is not None else None
    if not isinstance(payload, dict):
        return None, marks, body
    same = set(done.payload) == set(payload)
    if same and done.rejected is None and all(v is payload.get(k) for k, v in done.payload.items()):
        return None, marks, body
    return done, marks, jsonio.dumps(done.payload)


def _model_of(payload: object) -> str | None:
    said = payload.get("model") if isinstance(payload, dict) else None
    return said if isinstance(said, str) else None
