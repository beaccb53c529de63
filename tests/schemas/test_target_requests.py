"""What a target refuses besides JSON Schema keywords: Bedrock's empty descriptions and
``tool_choice: none``, look-around patterns and objects inside unions (issue 35).

The look-around oracle is Python's own regex parser (``re._parser``): it finds assertion
nodes wherever they are, escaped or in classes or not, independently of the converter's
own test for them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.budget import examples
from tests.schemas.checker import nodes, problems

import bridge_rules
from bridge_rules.schemas import TARGETS, convert, profile

try:
    from re import _parser as sre_parse
except ImportError:  # pragma: no cover - Python 3.10
    import sre_parse  # type: ignore[no-redef]

_ASSERTS = {sre_parse.ASSERT, sre_parse.ASSERT_NOT}


def _looks_around(pattern: str) -> bool:
    def walk(parsed: Any) -> bool:
        for op, arg in parsed:
            if op in _ASSERTS:
                return True
            for sub in arg if isinstance(arg, (list, tuple)) else ():
                if isinstance(sub, sre_parse.SubPattern) and walk(sub):
                    return True
                if isinstance(sub, (list, tuple)):
                    for inner in sub:
                        if isinstance(inner, sre_parse.SubPattern) and walk(inner):
                            return True
        return False

    return walk(sre_parse.parse(pattern))


def _engine(tmp_path: Path, target: str) -> bridge_rules.Engine:
    path = tmp_path / "r.yaml"
    path.write_text(f"bridge-rules: 1\nschemas: {{target: {target}}}\n", encoding="utf-8")
    return bridge_rules.load([str(path)])


def _payload(**extra: Any) -> dict[str, Any]:
    tools = [
        {"name": "a", "description": "", "input_schema": {"type": "object"}},
        {"name": "b", "description": "  ", "input_schema": {"type": "object"}},
        {"name": "c", "description": "Said.", "input_schema": {"type": "object"}},
    ]
    base = {"model": "claude-x", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
    return {**base, "tools": tools, **extra}


def test_bedrock_gets_no_empty_description(tmp_path: Path) -> None:
    sent = _engine(tmp_path, "bedrock").outbound(_payload(), env={}).payload
    assert [t.get("description") for t in sent["tools"]] == [None, None, "Said."]
    assert all("description" not in t for t in sent["tools"][:2])


@pytest.mark.parametrize("spelling", [{"type": "none"}, {"type": "none", "extra": 1}])
def test_bedrock_hears_tool_choice_none_as_no_tools(tmp_path: Path, spelling: Any) -> None:
    sent = _engine(tmp_path, "bedrock").outbound(_payload(tool_choice=spelling), env={}).payload
    assert "tool_choice" not in sent
    assert "tools" not in sent


@pytest.mark.parametrize("target", [t for t in TARGETS if t != "bedrock"])
def test_other_targets_keep_both(tmp_path: Path, target: str) -> None:
    eng = _engine(tmp_path, target)
    sent = eng.outbound(_payload(tool_choice={"type": "none"}), env={}).payload
    assert sent["tool_choice"] == {"type": "none"}
    assert [t["description"] for t in sent["tools"]] == ["", "  ", "Said."]


LOOKAROUND = ["^(?=.*\\d)[a-z0-9]+$", "^(?!-)[a-z-]+$", "(?<=@)\\w+", "^\\w+(?<!_)$"]
PLACES = [
    lambda s: {"type": "object", "properties": {"v": s}},
    lambda s: {"type": "object", "properties": {"v": {"type": "array", "items": s}}},
    lambda s: {"type": "object", "properties": {"v": {"anyOf": [s, {"type": "integer"}]}}},
    lambda s: {
        "type": "object",
        "properties": {
            "v": {"oneOf": [{"type": "object", "properties": {"w": s}}, {"type": "null"}]}
        },
    },
    lambda s: {"type": "object", "properties": {"v": {"$ref": "#/$defs/d"}}, "$defs": {"d": s}},
    lambda s: {"type": "object", "properties": {"v": {"allOf": [s, {"minLength": 1}]}}},
]


@settings(max_examples=examples(60), deadline=None)
@given(pattern=st.sampled_from(LOOKAROUND), place=st.sampled_from(PLACES))
def test_no_look_around_reaches_openai_strict(pattern: str, place: Any) -> None:
    assert _looks_around(pattern)
    schema = place({"type": "string", "pattern": pattern})
    done = convert(schema, profile("openai-strict")).schema
    left = [n["pattern"] for _, n in nodes(done) if isinstance(n.get("pattern"), str)]
    assert not any(_looks_around(p) for p in left), left
    assert problems("openai-strict", done) == []


def test_objects_inside_unions_are_closed_and_kept_as_objects() -> None:
    member = {"type": "object", "properties": {"a": {"type": "string"}}}
    bare = {"properties": {"b": {"type": "integer"}}, "required": ["b"]}
    schema = {
        "type": "object",
        "properties": {
            "x": {"anyOf": [member, bare]},
            "y": {"type": "array", "items": {"anyOf": [member, {"type": "null"}]}},
        },
    }
    done = convert(schema, profile("openai-strict")).schema
    assert problems("openai-strict", done) == []
    for ptr, node in nodes(done):
        if "properties" in node:
            assert node.get("additionalProperties") is False, ptr
        assert "JSON text" not in str(node.get("description", "")), ptr
    back = convert(schema, profile("openai-strict")).shape.restore(
        {"x": {"b": 3, "a": None}, "y": [{"a": None}]}
    )
    assert back == {"x": {"b": 3}, "y": [{}]}


def test_the_look_around_oracle_is_not_the_converters_test() -> None:
    """The converter's own test flags an escaped ``\\(?=`` too; the oracle parses it."""
    assert not _looks_around("\\(?=")
    assert re.compile("\\(?=")
