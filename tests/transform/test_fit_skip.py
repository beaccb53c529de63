"""Issue 36: a request is fitted to its model (``models:``) only when fitting can change it,
and the fit's walk builds nothing for a message without a thinking block; the bytes out stay
what they were.

Oracle: the sources before the change, frozen in :mod:`tests.transform.fit_before` (the old
``fit`` and ``fit_body``, whose results the old ``start_turn`` fed to the rewrite), run on
generated requests: thinking blocks signed, marked by the proxy, marked with the mark's
characters written as ``\\u`` escapes, system messages, forced ``tool_choice``, disabled
thinking, duplicate keys, under rules whose decisions keep and rules whose decisions act.
"""

from __future__ import annotations

import json
import random
from collections import OrderedDict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.budget import examples
from tests.transform import fit_before

import bridge_rules
from bridge_rules import jsonio
from bridge_rules.engine import Engine
from bridge_rules.transform.cached import rewrite_outbound_bytes
from bridge_rules.transform.model_fit import MARK, fit
from bridge_rules.transform.outbound import rewrite_outbound

ACTING = """\
bridge-rules: 1
extends: default
models:
  "claude-x-*":
    thinking: {unknown: strip, foreign: strip}
    system_in_messages: user
  "claude-y-*":
    tool_choice: {forced: refuse}
    thinking: {disabled: {type: adaptive}}
"""
MODELS = [
    "claude-sonnet-4-5", "claude-sonnet-5-5", "claude-opus-5-5", "claude-haiku-5-5",
    "claude-fable-5-1", "claude-fable-5", "claude-sonnet-5", "claude-x-1", "claude-y-1",
]  # fmt: skip
OPEN = {"PI_ANTHROPIC_MESSAGES_FORCE_CANONICAL": "1"}
CLOSED = {"PI_ANTHROPIC_MESSAGES_DISABLE_CANONICAL": "1"}


@pytest.fixture(scope="module")
def engines(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Engine]:
    path = Path(tmp_path_factory.mktemp("acting")) / "rules.yaml"
    path.write_text(ACTING, encoding="utf-8")
    return {"default": bridge_rules.load(), "acting": bridge_rules.load(str(path))}


def _signature(draw: st.DrawFn) -> Any:
    plain = draw(st.sampled_from(["sig", "EqQKCAgQ", "", "brm1", "~x"]))
    producer = draw(st.sampled_from([*MODELS, "other-model"]))
    return draw(
        st.sampled_from(
            [plain, f"{MARK}{producer}~{plain}", f"{MARK}{producer}", f"x{MARK}{producer}~y", 7]
        )
    )


@st.composite
def blocks(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["text", "thinking", "redacted_thinking", "tool_use", "odd"]))
    if kind == "text":
        return {"type": "text", "text": draw(st.sampled_from(["hi", "a ~ b", "brm1~"]))}
    if kind == "thinking":
        return {"type": "thinking", "thinking": "hm", "signature": _signature(draw)}
    if kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": _signature(draw)}
    if kind == "tool_use":
        return {"type": "tool_use", "id": "toolu_01", "name": "read", "input": {"path": "a"}}
    return draw(st.sampled_from(["loose text", 3, {"type": None}, {"type": 1}, {}]))


@st.composite
def requests(draw: st.DrawFn) -> dict[str, Any]:
    messages: list[Any] = []
    for _ in range(draw(st.integers(0, 5))):
        role = draw(st.sampled_from(["user", "assistant", "assistant", "system", 5]))
        content = draw(st.one_of(st.lists(blocks(), max_size=4), st.just("said"), st.just(None)))
        messages.append({"role": role, "content": content})
    if draw(st.booleans()):
        messages.append("not a message")
    payload: dict[str, Any] = {"max_tokens": 64, "messages": messages}
    model = draw(st.sampled_from([*MODELS, None, 12]))
    if model is not None:
        payload["model"] = model
    choice = draw(
        st.sampled_from(
            [None, {"type": "any"}, {"type": "tool", "name": "read"}, {"type": "auto"}, "any"]
        )
    )
    if choice is not None:
        payload["tool_choice"] = choice
    thinking = draw(st.sampled_from([None, {"type": "disabled"}, {"type": "enabled"}, []]))
    if thinking is not None:
        payload["thinking"] = thinking
    if draw(st.booleans()):
        payload["system"] = draw(st.sampled_from(["Be brief.", [{"type": "text", "text": "B"}]]))
    if draw(st.booleans()):
        payload["tools"] = [{"name": "read", "input_schema": {"type": "object"}}]
    return payload


def _escaped(text: str, rng: random.Random) -> str:
    """``text`` (JSON) with some ASCII letters and digits inside its strings written as
    ``\\u`` escapes, as no usual writer does but any client may."""
    out, inside, escape = [], False, False
    for ch in text:
        plain = ch.isascii() and (ch.isalnum() or ch == "~")
        if inside and not escape and plain and rng.random() < 0.3:
            out.append(f"\\u{ord(ch):04{'x' if rng.random() < 0.5 else 'X'}}")
            continue
        out.append(ch)
        if escape:
            escape = False
        elif ch == "\\":
            escape = inside
        elif ch == '"':
            inside = not inside
    return "".join(out)


@st.composite
def bodies(draw: st.DrawFn) -> bytes:
    payload = draw(requests())
    how = draw(st.sampled_from(["compact", "spaced", "escaped", "duplicate model"]))
    if how == "spaced":
        return json.dumps(payload).encode()
    text = json.dumps(payload, separators=(",", ":"))
    if how == "escaped":
        return _escaped(text, random.Random(draw(st.integers(0, 2**16)))).encode()
    if how == "duplicate model":
        return ('{"model":"claude-x-1",' + text[1:]).encode()
    return text.encode()


def _old_turn(eng: Engine, body: bytes, model: str | None, env: dict[str, str]) -> Any:
    """What ``start_turn`` did before: fit the body (the old code), then rewrite it."""
    rt = eng.runtime
    fitted, marks, body = fit_before.fit_body(rt, body, model)
    outcome = rewrite_outbound_bytes(rt, body, model, env, cache=False)
    if fitted is not None and fitted.rejected is not None and outcome.rejected is None:
        outcome.rejected = fitted.rejected
    if not outcome.gate_open and not outcome.policed:
        outcome.body = body
    applied = None if fitted is None else fitted.applied
    return outcome, marks, applied


def _seen(outcome: Any, marks: Any, applied: Any) -> dict[str, Any]:
    return {
        "body": outcome.body,
        "marks": marks,
        "applied": applied,
        "rejected": outcome.rejected,
        "renames": outcome.renames,
        "registered": outcome.registered,
        "gate_open": outcome.gate_open,
    }


@settings(
    max_examples=examples(400),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    body=bodies(),
    rules=st.sampled_from(["default", "acting"]),
    model=st.sampled_from([None, None, *MODELS]),
    how=st.tuples(st.sampled_from([OPEN, CLOSED]), st.booleans()),
)
def test_a_turn_writes_what_the_old_fit_and_rewrite_wrote(
    engines: dict[str, Engine],
    body: bytes,
    rules: str,
    model: str | None,
    how: tuple[dict[str, str], bool],
) -> None:
    """Gate open and shut, through the message cache and without it."""
    eng = engines[rules]
    env, cache = how
    want = _seen(*_old_turn(eng, body, model, env))
    turn = eng.turn(body, model, env, cache=cache)
    applied = None if turn.fitted is None else turn.fitted.applied
    assert _seen(turn.outcome, turn.marks, applied) == want


def _old_outbound(eng: Engine, payload: Any, model: str | None, env: dict[str, str]) -> Any:
    """What ``Engine.outbound`` did before: the old fit, then the rewrite."""
    rt = eng.runtime
    fitted = fit_before.fit(rt.rules.models, payload, model, rt.outbound_name)
    result = rewrite_outbound(rt, fitted.payload, model, env)
    if fitted.rejected is not None and result.rejected is None:
        result.rejected = fitted.rejected
    return result


def _outcome(result: Any) -> dict[str, Any]:
    return {
        "payload": jsonio.dumps(result.payload),
        "rejected": result.rejected,
        "renames": result.renames,
        "registered": result.registered,
        "dropped": result.dropped,
        "gate_open": result.gate_open,
        "shapes": sorted(result.shapes),
    }


@settings(
    max_examples=examples(400),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    payload=requests(),
    rules=st.sampled_from(["default", "acting"]),
    model=st.sampled_from([None, None, *MODELS]),
    env=st.sampled_from([OPEN, CLOSED]),
)
def test_engine_outbound_gives_what_the_old_fit_and_rewrite_gave(
    engines: dict[str, Engine],
    payload: dict[str, Any],
    rules: str,
    model: str | None,
    env: dict[str, str],
) -> None:
    """The dict path: the walk notes a marked thinking block, and only then is the request
    fitted first, as before; the input is left as it came."""
    eng = engines[rules]
    before = jsonio.dumps(payload)
    want = _outcome(_old_outbound(eng, payload, model, env))
    assert _outcome(eng.outbound(payload, model, env)) == want
    assert jsonio.dumps(payload) == before


@settings(max_examples=examples(400), deadline=None)
@given(payload=requests(), model=st.sampled_from([None, *MODELS]))
def test_fit_gives_what_the_old_fit_gave(payload: dict[str, Any], model: str | None) -> None:
    """The dict path (``Engine.outbound``): the same payload, the same decisions applied."""
    eng = bridge_rules.load()
    table, wire = eng.runtime.rules.models, eng.runtime.outbound_name
    old, new = fit_before.fit(table, payload, model, wire), fit(table, payload, model, wire)
    assert jsonio.dumps(new.payload) == jsonio.dumps(old.payload)
    assert (new.applied, new.rejected) == (old.applied, old.rejected)


def test_an_escaped_mark_is_still_taken_off(engines: dict[str, Engine]) -> None:
    """The mark with its ``~`` written as ``\\u007e``: the body holds no ``brm1~``, yet the
    signature the client echoes carries the mark, which must not reach the upstream."""
    block = {"type": "thinking", "thinking": "t", "signature": f"{MARK}claude-sonnet-4-5~SIG"}
    message = {"role": "assistant", "content": [block]}
    payload = {"model": "claude-sonnet-4-5", "messages": [message]}
    body = json.dumps(payload, separators=(",", ":")).replace("~", "\\u007e").encode()
    assert MARK.encode() not in body
    sent = jsonio.loads(engines["default"].turn(body, env=OPEN).body)
    assert sent["messages"][0]["content"][0]["signature"] == "SIG"


@pytest.mark.parametrize("kind", [[], {}, ["thinking"]])
def test_a_block_typed_as_a_list_or_object_passes(kind: Any) -> None:
    """Before, such a block in an assistant message raised TypeError out of the fit (and out
    of ``Engine.outbound`` and ``Engine.turn``): it is not a thinking block, and passes."""
    eng = bridge_rules.load()
    message = {"role": "assistant", "content": [{"type": kind, "signature": "s"}]}
    payload = {"model": "claude-sonnet-4-5", "max_tokens": 8, "messages": [message]}
    assert eng.outbound(payload, env=OPEN).payload["messages"] == [message]
    body = jsonio.dumps({**payload, "model": "claude-sonnet-5-5"})
    assert jsonio.loads(eng.turn(body, env=OPEN).body)["messages"] == [message]


class _Blocks(list):  # type: ignore[type-arg]
    """A list subclass, as a library caller may build a message's content."""


@pytest.mark.parametrize(
    "wrap",
    [
        OrderedDict,
        lambda m: {**m, "content": _Blocks(m["content"])},
        lambda m: {**m, "content": [OrderedDict(b) for b in m["content"]]},
    ],
    ids=["message", "content", "block"],
)
def test_a_mark_inside_a_dict_or_list_subclass_still_comes_off(
    engines: dict[str, Engine], wrap: Any
) -> None:
    """The walk looks only into plain dicts and lists; the fit into any: a marked block in a
    subclass a library caller built is fitted as before."""
    block = {"type": "thinking", "thinking": "t", "signature": f"{MARK}claude-sonnet-4-5~SIG"}
    message = wrap({"role": "assistant", "content": [block]})
    payload = {"model": "claude-sonnet-4-5", "max_tokens": 8, "messages": [message]}
    eng = engines["default"]
    want = _outcome(_old_outbound(eng, payload, None, OPEN))
    assert _outcome(eng.outbound(payload, env=OPEN)) == want
    assert b"SIG" in want["payload"]
    assert MARK.encode() not in want["payload"]
