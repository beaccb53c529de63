"""Tool-use ids the target would refuse go out valid, paired, and the same on every worker.

Ids from OpenAI-compatible or Kimi upstreams (``functions.Bash:0``) and ids past a
target's length cap are rewritten in the request sent upstream; the call and its result
get the same id, valid ids are never touched, and the agent's own history is not changed.
"""

from __future__ import annotations

import re
import subprocess
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.budget import examples

import bridge_rules
from bridge_rules.callids import RULES, id_rule, wire_id
from bridge_rules.engine import Engine

ANTHROPIC = re.compile(r"^[a-zA-Z0-9_-]+$")
ids = st.one_of(
    st.text(max_size=300),
    st.text(alphabet="abcXYZ019_-.:/|+ ", min_size=0, max_size=120),
    st.sampled_from(["functions.Bash:0", "call_abc", "", "toolu_01ABC", "a" * 65]),
)


any_text = st.text(st.characters(exclude_categories=()), max_size=200)  # lone surrogates too


@given(st.one_of(ids, any_text), st.sampled_from(sorted(RULES)))
def test_every_id_comes_out_valid_and_valid_ids_stay(value: str, target: str) -> None:
    rule = id_rule(target)
    out = wire_id(value, rule)
    assert ANTHROPIC.match(out)
    assert rule.max_len is None or len(out) <= rule.max_len
    assert wire_id(out, rule) == out  # a rewritten id is valid, so it is never rewritten twice
    if rule.valid(value):
        assert out == value


@given(ids, ids)
def test_distinct_ids_stay_distinct(a: str, b: str) -> None:
    for rule in RULES.values():
        if a != b:
            assert wire_id(a, rule) != wire_id(b, rule)


def test_unknown_targets_take_anthropic_rule() -> None:
    assert id_rule("gemini") is id_rule(None) is RULES["anthropic"]


def _history(call_id: str) -> bytes:
    return orjson.dumps(
        {
            "model": "claude-sonnet-4-5",
            "max_tokens": 10,
            "tools": [{"name": "read", "input_schema": {"type": "object"}}],
            "messages": [
                {"role": "user", "content": "read it"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "tool_use", "id": call_id, "name": "read", "input": {"path": "a"}}
                    ],
                },
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": call_id, "content": "x"}],
                },
            ],
        }
    )


def _pair(engine: Engine, call_id: str, *, cache: bool = True) -> tuple[Any, Any]:
    sent = orjson.loads(engine.turn(_history(call_id), env={}, cache=cache).body)
    use, result = sent["messages"][1]["content"][0], sent["messages"][2]["content"][0]
    return use["id"], result["tool_use_id"]


@given(ids)
def test_a_call_and_its_result_are_rewritten_alike_on_any_worker(call_id: str) -> None:
    first, second = bridge_rules.load(), bridge_rules.load()
    use_id, result_id = _pair(first, call_id, cache=False)
    assert use_id == result_id == wire_id(call_id)
    assert _pair(second, call_id) == (use_id, result_id)


def test_a_kimi_id_goes_out_valid_and_the_body_is_otherwise_unchanged(eng: Engine) -> None:
    use_id, result_id = _pair(eng, "functions.Bash:0")
    assert use_id == result_id
    assert use_id.startswith("functions_Bash_0_bri")
    assert _pair(eng, "toolu_01ABC") == ("toolu_01ABC", "toolu_01ABC")


def test_sealed_ids_are_opened_before_the_id_is_made_valid() -> None:
    """A Kimi id the proxy sealed (a stripped pipeline) opens to the original, which is then
    made valid: the upstream never sees the seal, nor the refused characters."""
    engine = bridge_rules.load("pi-tool-guard", seal_key=b"k" * 32)
    call = {"command": "make 2>&1 | head -n 1"}
    answer = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "functions.bash:7", "name": "Bash", "input": call}],
    }
    given = engine.inbound(answer, ["bash"])["content"][0]
    sealed = given["id"]
    assert sealed.startswith("functions.bash:7_brs")
    body = orjson.loads(_history(sealed).replace(b'"read"', b'"bash"'))
    body["messages"][1]["content"][0]["input"] = given["input"]  # what the agent echoes
    body["messages"][2]["content"][0]["content"] = "one\ntwo\n"
    sent = orjson.loads(engine.turn(orjson.dumps(body), env={}).body)
    use, result = sent["messages"][1]["content"][0], sent["messages"][2]["content"][0]
    assert use["id"] == result["tool_use_id"] == wire_id("functions.bash:7")
    assert result["content"] == "one\n"


def _grep_valid(values: list[str], max_len: int | None) -> list[bool]:
    """GNU grep's verdict (C locale, whole lines) on each id: the reference the walk's one
    compiled ``fullmatch`` is checked against. An id holding a line end is never valid."""
    count = "+" if max_len is None else f"{{1,{max_len}}}"
    lines = [v for v in values if "\n" not in v and "\r" not in v]
    data = b"\n".join(v.encode("utf-8", "surrogatepass") for v in lines) + b"\n"
    done = subprocess.run(
        ["/usr/bin/grep", "-naxE", f"[A-Za-z0-9_-]{count}"],
        input=data,
        capture_output=True,
        env={"LC_ALL": "C"},
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    hits = {int(line.split(b":", 1)[0]) - 1 for line in done.stdout.splitlines()}
    verdict = {v: i in hits for i, v in enumerate(lines)}
    return [verdict.get(v, False) for v in values]


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.one_of(ids, any_text), min_size=1, max_size=40), st.sampled_from(sorted(RULES)))
def test_the_walks_id_check_is_grep_s(values: list[str], target: str) -> None:
    """The history walk checks every id with ``IdRule.matcher()`` (issue 36's cost): it says
    valid exactly where GNU grep's whole-line match does, and where ``valid`` does."""
    rule = id_rule(target)
    accepts = rule.matcher()
    ours = [accepts(v) is not None for v in values]
    assert ours == _grep_valid(values, rule.max_len)
    assert ours == [rule.valid(v) for v in values]
