"""Properties of ``models:`` over generated requests and generated entries.

Oracles that do not share the code's assumptions: the fake upstream's statement of what
each model refuses (tests/e2e/model_upstream.py, from the reference notes), a structural
diff of the JSON (tests/e2e/jsondiff.py), and the overlay rule of docs/models.md as a fold
over plain dicts with a hand-written glob matcher.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsondiff import differences, within
from model_upstream import refusal, signature
from tests.budget import examples

import bridge_rules
from bridge_rules.transform.model_fit import MARK, fit, mark, unmark

CURRENT = ["claude-sonnet-5-5", "claude-opus-5-5", "claude-haiku-5-5", "claude-fable-5-1"]
MODELS = [*CURRENT, "claude-sonnet-5"]
ENGINE = bridge_rules.load()

text = st.text(alphabet="abc xyz.", min_size=1, max_size=12)


@st.composite
def conversations(draw: st.DrawFn) -> dict[str, Any]:
    """A request to one model whose history was answered by several, as a client replays
    it through the proxy (each thinking block with the signature its producer gave, marked
    by the proxy on the way back)."""
    model = draw(st.sampled_from(MODELS))
    messages: list[dict[str, Any]] = [{"role": "user", "content": draw(text)}]
    for _ in range(draw(st.integers(0, 4))):
        producer = draw(st.sampled_from(MODELS))
        said = draw(text)
        content: list[dict[str, Any]] = []
        if draw(st.booleans()):
            sig = mark(signature(producer, said), producer)
            content.append({"type": "thinking", "thinking": said, "signature": sig})
        content.append({"type": "text", "text": draw(text)})
        messages.append({"role": "assistant", "content": content})
        if draw(st.booleans()):
            messages.append({"role": "system", "content": draw(text)})
        messages.append({"role": "user", "content": draw(text)})
    payload: dict[str, Any] = {"model": model, "max_tokens": 50, "messages": messages}
    if draw(st.booleans()):
        payload["system"] = draw(st.sampled_from(["Be brief.", [{"type": "text", "text": "B"}]]))
    choice = draw(st.sampled_from([None, {"type": "any"}, {"type": "tool", "name": "finish"}]))
    if choice is not None:
        payload["tools"] = [{"name": "finish", "input_schema": {"type": "object"}}]
        payload["tool_choice"] = choice
    payload["thinking"] = draw(
        st.sampled_from([{"type": "adaptive"}, {"type": "disabled"}, {"type": "enabled"}])
    )
    return payload


def _fit(payload: dict[str, Any]) -> Any:
    return fit(ENGINE.runtime.rules.models, payload, None, ENGINE.runtime.outbound_name)


@settings(max_examples=examples(200), deadline=None)
@given(payload=conversations())
def test_the_default_rules_make_every_request_acceptable(payload: dict[str, Any]) -> None:
    """What the fake (the reference's constraints) would refuse, the default rules fit."""
    done = _fit(payload)
    assert done.rejected is None
    assert refusal(done.payload) is None, (payload, done.payload)


@settings(max_examples=examples(200), deadline=None)
@given(payload=conversations())
def test_a_fitted_request_differs_only_where_a_rule_applied(payload: dict[str, Any]) -> None:
    done = _fit(payload)
    allowed: set[tuple[Any, ...]] = set()
    for decision, _what in done.applied:
        field = decision.field
        if field == "tool_choice.forced":
            allowed |= {("tool_choice",), ("system",)}
        elif field == "system_in_messages":
            allowed |= {("messages",), ("system",)}
        elif field == "thinking.disabled":
            allowed.add(("thinking",))
        else:
            allowed |= {("messages", i, "content") for i in range(len(payload["messages"]))}
    # the proxy's mark is always taken off: exactly the marked signatures may change
    for i, message in enumerate(payload["messages"]):
        for j, block in enumerate(message["content"] if message["role"] == "assistant" else []):
            if block.get("signature", "").startswith(MARK):
                allowed.add(("messages", i, "content", j, "signature"))
    assert within(differences(payload, done.payload), allowed) == set()
    assert MARK not in repr(done.payload)


@settings(max_examples=examples(100), deadline=None)
@given(payload=conversations())
def test_fitting_twice_changes_nothing_more(payload: dict[str, Any]) -> None:
    once = _fit(payload).payload
    assert _fit(once).payload == once


@given(sig=st.text(max_size=40), model=st.text(max_size=20))
def test_a_mark_comes_off_as_it_went_on(sig: str, model: str) -> None:
    marked = mark(sig, model)
    producer, original = unmark(marked)
    if model and "~" not in model and not sig.startswith(MARK):
        assert (producer, original) == (model, sig)
    else:
        assert marked == sig


# ------------------------------------------------------------ overlay
SEGMENTS = ["claude", "sonnet", "opus", "5", "5-5"]
FIELDS = {
    "tool_choice": ("forced", ["keep", "auto", "refuse"]),
    "thinking": ("foreign", ["keep", "strip"]),
}
globs = st.lists(st.sampled_from([*SEGMENTS, "*"]), min_size=1, max_size=3).map("-".join)
entry = st.fixed_dictionaries(
    {},
    optional={
        "tool_choice": st.sampled_from(FIELDS["tool_choice"][1]),
        "thinking": st.sampled_from(FIELDS["thinking"][1]),
        "system_in_messages": st.sampled_from(["keep", "fold", "user"]),
    },
)
files = st.lists(st.dictionaries(globs, entry, max_size=3), min_size=1, max_size=4)
ids = st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=3).map("-".join)


def _matches(glob: str, model: str) -> bool:
    """The oracle's matcher: ``*`` is any run of characters, everything else itself."""
    return re.fullmatch(".*".join(re.escape(p) for p in glob.split("*")), model) is not None


def _yaml(models: dict[str, dict[str, str]]) -> str:
    lines = ["bridge-rules: 1", "models:"]
    for glob, fields in models.items():
        lines.append(f'  "{glob}":')
        for key, value in fields.items():
            sub = FIELDS.get(key)
            lines.append(f"    {key}: {{{sub[0]}: {value}}}" if sub else f"    {key}: {value}")
        if not fields:
            lines[-1] += " {}"
    return "\n".join(lines) + "\n"


@settings(max_examples=examples(60), deadline=None)
@given(layers=files, model=ids)
def test_later_entries_overlay_earlier_ones_field_by_field(
    tmp_path_factory: pytest.TempPathFactory, layers: list[dict[str, Any]], model: str
) -> None:
    root: Path = tmp_path_factory.mktemp("models")
    for index, models in enumerate(layers):
        (root / f"r{index}.yaml").write_text(_yaml(models), encoding="utf-8")
    expected = {"tool_choice": "keep", "thinking": "keep", "system_in_messages": "keep"}
    for models in layers:
        for glob, fields in models.items():
            if _matches(glob, model):
                expected.update(fields)
    decided = bridge_rules.load(root).runtime.rules.models.decide(model)
    assert {
        "tool_choice": decided["tool_choice.forced"].value,
        "thinking": decided["thinking.foreign"].value,
        "system_in_messages": decided["system_in_messages"].value,
    } == expected
