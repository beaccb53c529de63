"""What the model reads agrees with the schema it sees, and results take the shape the
description sent promises: ``wire_description`` and a binding's ``output:`` operations.

The output operations travel with the call's id (an unauthenticated tag the agent echoes),
are applied on every request from the agent's own copy of the result (so never twice), and
only where the description sent is not the agent's own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

import bridge_rules
from bridge_rules import RulesError
from bridge_rules.bindings.output import compile_output
from bridge_rules.callids import wire_id
from bridge_rules.engine import Engine
from bridge_rules.model_bindings import Binding
from bridge_rules.pins import load_pin
from bridge_rules.source import Span
from bridge_rules.transform.results import OUTPUT_MARK

PI = load_pin("pi@0.73.1")
READ_TEXT = (
    "Reads a file. Results are returned using cat -n format, with line numbers starting at 1; "
    "errors come as <tool_use_error>...</tool_use_error>."
)
READ_BINDING = f"""
bindings:
  - local: read
    wire: Read
    schema: canonical
    wire_description: "{READ_TEXT}"
    input:
      - rename: {{file_path: path}}
      - rename: {{offset: offset}}
    output:
      - number_lines: {{start_from: offset}}
      - surround: {{before: "<tool_use_error>", after: "</tool_use_error>", when: error}}
"""


def _rules(tmp_path: Path, body: str) -> Engine:
    path = tmp_path / "rules.yaml"
    path.write_text("bridge-rules: 1\nextends: default\n" + body, encoding="utf-8")
    return bridge_rules.load(str(path))


def _tools(*names: str) -> list[dict[str, Any]]:
    return [
        {"name": n, "description": PI.descriptions[n], "input_schema": PI.tools[n]} for n in names
    ]


def _sent(engine: Engine, messages: list[Any], *, cache: bool = True) -> dict[str, Any]:
    body = {"model": "claude-sonnet-4-5", "max_tokens": 5, "tools": _tools("read", "edit")}
    body["messages"] = messages
    return dict(orjson.loads(engine.turn(orjson.dumps(body), env={}, cache=cache).body))


def test_pi_edit_goes_out_with_a_description_naming_the_fields_of_its_schema() -> None:
    sent = _sent(bridge_rules.load(), [{"role": "user", "content": "x"}])
    edit = next(t for t in sent["tools"] if t["name"] == "Edit")
    assert "edits[].oldText" in PI.descriptions["edit"]
    assert "Every old_string must match a unique" in edit["description"]
    assert "oldText" not in edit["description"]
    assert {"old_string", "new_string"} <= set(edit["input_schema"]["properties"])
    read = next(t for t in sent["tools"] if t["name"] == "Read")
    assert read["description"] == PI.descriptions["read"]  # "path" is a word, not rewritten


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("local", PI.descriptions["edit"]),
        ("Replace text in a file.", "Replace text in a file."),
    ],
)
def test_wire_description_local_or_a_text_of_the_rules(
    tmp_path: Path, mode: str, expected: str
) -> None:
    engine = _rules(
        tmp_path,
        "bindings:\n  - local: edit\n    wire: Edit\n    schema: hybrid\n    extras: [edits]\n"
        f"    wire_description: {mode}\n"
        "    input:\n      - rename: {file_path: path}\n"
        "      - wrap: {into: edits, fields: {old_string: oldText, new_string: newText}}\n"
        "    losses:\n      - {fields: ['*'], why: test}\n",
    )
    sent = _sent(engine, [{"role": "user", "content": "x"}])
    assert next(t for t in sent["tools"] if t["name"] == "Edit")["description"] == expected


def _history(call_id: str, content: Any, *, is_error: bool = False) -> list[Any]:
    use = {"type": "tool_use", "id": call_id, "name": "read", "input": {"path": "a", "offset": 3}}
    result = {"type": "tool_result", "tool_use_id": call_id, "content": content}
    if is_error:
        result["is_error"] = True
    return [
        {"role": "user", "content": "read a"},
        {"role": "assistant", "content": [use]},
        {"role": "user", "content": [result]},
    ]


def _answer(engine: Engine, call_id: str) -> str:
    """The id the agent gets for the model's Read call (a message answer)."""
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "content": [
            {
                "type": "tool_use",
                "id": call_id,
                "name": "Read",
                "input": {"file_path": "a", "offset": 3},
            }
        ],
    }
    return str(engine.inbound(message, ["read"])["content"][0]["id"])


def test_results_are_reshaped_as_the_sent_description_promises(tmp_path: Path) -> None:
    engine = _rules(tmp_path, READ_BINDING)
    sent = _sent(engine, [{"role": "user", "content": "x"}])
    assert next(t for t in sent["tools"] if t["name"] == "Read")["description"] == READ_TEXT
    tagged = _answer(engine, "toolu_01A")
    assert tagged.startswith("toolu_01A" + OUTPUT_MARK)
    out = _sent(engine, _history(tagged, "alpha\nbeta\n"))["messages"]
    assert out[1]["content"][0]["id"] == "toolu_01A"  # the upstream sees its own id
    result = out[2]["content"][0]
    assert result["tool_use_id"] == "toolu_01A"
    assert result["content"] == "     3\talpha\n     4\tbeta\n"  # numbered from the offset
    error = _sent(
        engine, _history(tagged, [{"type": "text", "text": "no such file"}], is_error=True)
    )
    assert error["messages"][2]["content"][0]["content"] == [
        {"type": "text", "text": "<tool_use_error>     3\tno such file</tool_use_error>"}
    ]


def test_never_applied_twice_and_the_same_with_or_without_the_cache(tmp_path: Path) -> None:
    engine = _rules(tmp_path, READ_BINDING)
    engine.runtime.message_cache.configure(min_body=0)  # small bodies use the cache too
    tagged = _answer(engine, "toolu_01B")
    history = _history(tagged, "one\n")
    first = _sent(engine, history, cache=False)
    again = [*history, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "y"}]
    body = {"model": "claude-sonnet-4-5", "max_tokens": 5, "tools": _tools("read", "edit")}
    reused = 0
    for _ in range(3):  # the agent resends its own history: reshaped once per request
        turn = engine.turn(orjson.dumps({**body, "messages": again}), env={})
        reused += turn.outcome.reused
        later = orjson.loads(turn.body)
        assert later["messages"][:3] == first["messages"]
    assert reused > 0  # the reshaped result came from the message cache, unchanged
    assert first["messages"][2]["content"][0]["content"] == "     3\tone\n"
    assert _sent(engine, again, cache=False) == later


def test_without_a_promise_results_go_out_unchanged(tmp_path: Path) -> None:
    """The same output operations, with the agent's own description sent: no reshaping."""
    engine = _rules(tmp_path, READ_BINDING.replace(f'"{READ_TEXT}"', "local"))
    assert engine.runtime.outputs == {}
    tagged = _answer(engine, "toolu_01C")
    assert tagged == "toolu_01C"
    out = _sent(engine, _history(tagged, "alpha\n"))["messages"][2]["content"][0]
    assert out["content"] == "alpha\n"


def test_ids_that_carry_a_tag_and_are_refused_by_the_target_are_opened_then_made_valid(
    tmp_path: Path,
) -> None:
    engine = _rules(tmp_path, READ_BINDING)
    tagged = _answer(engine, "functions.Read:0")
    out = _sent(engine, _history(tagged, "z\n"))["messages"]
    assert out[1]["content"][0]["id"] == out[2]["content"][0]["tool_use_id"]
    assert out[2]["content"][0]["tool_use_id"] == wire_id("functions.Read:0")
    assert out[2]["content"][0]["content"] == "     3\tz\n"


def test_a_forged_or_foreign_tag_does_not_open(tmp_path: Path) -> None:
    engine = _rules(tmp_path, READ_BINDING)
    for odd in ("toolu_1" + OUTPUT_MARK + "zzzz", "toolu_1" + OUTPUT_MARK, "x_bro!"):
        out = _sent(engine, _history(odd, "a\n"))["messages"][2]["content"][0]
        assert out["content"] == "a\n"


@pytest.mark.parametrize(
    ("text", "numbered"),
    [
        ("", ""),
        ("a", "     1\ta"),
        ("a\n", "     1\ta\n"),
        ("a\n\nb", "     1\ta\n     2\t\n     3\tb"),
        ("\n", "     1\t\n"),
    ],
)
def test_number_lines_numbers_as_cat_n_does(text: str, numbered: str) -> None:
    binding = Binding.model_validate(
        {"local": "read", "wire": "Read", "output": [{"number_lines": {}}]}
    )
    plan = compile_output(binding.output, lambda _i: Span("x"))
    assert plan is not None
    assert plan.reshape(text, False, {}) == numbered


def test_explain_shows_the_description_and_the_output_operations(tmp_path: Path) -> None:
    text = _rules(tmp_path, READ_BINDING).explain("read").sections["arguments"]["text"]
    assert "description sent: the rule's text" in text
    assert "output: number_lines {start_from: 'offset'}" in text


def test_an_unknown_output_operation_is_a_located_error(tmp_path: Path) -> None:
    with pytest.raises(RulesError) as exc:
        _rules(tmp_path, READ_BINDING.replace("number_lines", "number_line"))
    assert [(d.code, d.span.line) for d in exc.value.diagnostics] == [("BR106", 12)]  # at `output:`
    assert "did you mean 'number_lines'" in exc.value.diagnostics[0].message


def test_a_streamed_call_gets_the_same_tag_as_a_message_answer(tmp_path: Path) -> None:
    """pi streams its answers: the streamed call's id carries the tag too (the start is held
    until the call's input is complete), so its result is reshaped on the next request."""
    engine = _rules(tmp_path, READ_BINDING)
    args = orjson.dumps({"file_path": "a", "offset": 3}).decode()
    events = [
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "toolu_01A", "name": "Read", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": args[:7]},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": args[7:]},
        },
        {"type": "content_block_stop", "index": 0},
    ]
    stream = b"".join(
        b"event: " + e["type"].encode() + b"\ndata: " + orjson.dumps(e) + b"\n\n" for e in events
    )
    for size in (len(stream), 5):
        chunks = [stream[i : i + size] for i in range(0, len(stream), size)]
        out = b"".join(engine.inbound_stream(chunks, ["read"]))
        assert _answer(engine, "toolu_01A").encode() in out
    tagged = _answer(engine, "toolu_01A")
    result = _sent(engine, _history(tagged, "alpha\n"))["messages"][2]["content"][0]
    assert result["content"] == "     3\talpha\n"
