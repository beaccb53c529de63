"""The call API with the shipped rules: inbound (wire -> local, repaired), outbound (history)."""

from __future__ import annotations

from typing import Any

import pytest

import bridge_rules

ENG = bridge_rules.load()
PI = ["read", "write", "edit", "bash", "grep", "find", "ls", "web_search", "fetch_content"]


def test_the_documented_api() -> None:
    call = ENG.inbound_call("Read", {"file_path": "a.py"}, registered=["read"])
    assert (call.name, call.arguments) == ("read", {"path": "a.py"})
    call = ENG.outbound_call("edit", {"path": "a", "edits": [{"oldText": "x", "newText": "y"}]})
    assert (call.name, call.arguments) == (
        "Edit",
        {"file_path": "a", "old_string": "x", "new_string": "y"},
    )


INBOUND: list[tuple[str, dict[str, Any], str, dict[str, Any]]] = [
    (
        "Read_ide",
        {"file_path": "a", "offset": 3, "pages": "1-2"},
        "read",
        {"path": "a", "offset": 3, "pages": "1-2"},
    ),
    ("Write", {"file_path": "a", "content": "x"}, "write", {"path": "a", "content": "x"}),
    (
        "Edit",
        {"file_path": "a", "old_string": "x", "new_string": "y", "replace_all": False},
        "edit",
        {"path": "a", "edits": [{"oldText": "x", "newText": "y"}]},
    ),
    # replace_all: true is kept so pi's edit validation reports it (pi cannot do it).
    (
        "Edit",
        {"file_path": "a", "old_string": "x", "new_string": "y", "replace_all": True},
        "edit",
        {"path": "a", "replace_all": True, "edits": [{"oldText": "x", "newText": "y"}]},
    ),
    (
        "Edit",
        {"file_path": "a", "edits": [{"oldText": "1", "newText": "2"}] * 2},
        "edit",
        {"path": "a", "edits": [{"oldText": "1", "newText": "2"}] * 2},
    ),
    (
        "Bash",
        {"command": "ls", "timeout": 120000, "description": "list", "run_in_background": True},
        "bash",
        {"command": "ls", "timeout": 120, "run_in_background": True},
    ),
    (
        "Grep",
        {"pattern": "x", "-i": True, "-C": 2, "head_limit": 5, "output_mode": "content"},
        "grep",
        {"pattern": "x", "ignoreCase": True, "context": 2, "limit": 5, "output_mode": "content"},
    ),
    ("Grep", {"pattern": "x", "-C": 2, "context": 4}, "grep", {"pattern": "x", "context": 4}),
    ("Glob", {"pattern": "*.py", "path": "src"}, "find", {"pattern": "*.py", "path": "src"}),
    ("mcp__pi__ls", {"path": "."}, "ls", {"path": "."}),
    (
        "WebSearch",
        {"query": "foo", "blocked_domains": ["reddit.com", "x.com"]},
        "web_search",
        {"query": "foo", "domainFilter": ["-reddit.com", "-x.com"]},
    ),
    ("WebSearch", {"query": "A", "queries": ["B", "C"]}, "web_search", {"queries": ["B", "C"]}),
    ("WebSearch", {"query": "A", "queries": []}, "web_search", {"query": "A", "queries": []}),
    (
        "WebFetch",
        {"url": "u", "urls": ["v"], "prompt": "p"},
        "fetch_content",
        {"urls": ["v"], "prompt": "p"},
    ),
    # Repair after the binding: a model using pi-tool-guard's aliases on pi's names.
    ("Read", {"file": "a", "start": "10abc"}, "read", {"path": "a", "offset": 10}),
    ("Unknown", {"x": 1}, "Unknown", {"x": 1}),
]


@pytest.mark.parametrize(("wire", "args", "local", "expected"), INBOUND)
def test_inbound(wire: str, args: dict[str, Any], local: str, expected: dict[str, Any]) -> None:
    before = repr(args)
    call = ENG.inbound_call(wire, args, registered=PI)
    assert (call.name, call.arguments) == (local, expected)
    assert repr(args) == before  # the caller's arguments are never mutated


OUTBOUND: list[tuple[str, dict[str, Any], str, dict[str, Any]]] = [
    ("read", {"path": "a", "limit": 5}, "Read", {"file_path": "a", "limit": 5}),
    (
        "edit",
        {
            "path": "a",
            "edits": [{"oldText": "1", "newText": "2"}, {"oldText": "3", "newText": "4"}],
        },
        "Edit",
        {
            "file_path": "a",
            "edits": [{"oldText": "1", "newText": "2"}, {"oldText": "3", "newText": "4"}],
        },
    ),
    ("bash", {"command": "ls", "timeout": 1.5}, "Bash", {"command": "ls", "timeout": 1500}),
    (
        "grep",
        {"pattern": "x", "ignoreCase": True, "limit": 3, "context": 1},
        "Grep",
        {"pattern": "x", "-i": True, "head_limit": 3, "context": 1},
    ),
    (
        "web_search",
        {"query": "q", "domainFilter": ["a.org", "-b.com"]},
        "WebSearch",
        {"query": "q", "allowed_domains": ["a.org"], "blocked_domains": ["b.com"]},
    ),
    ("fetch_content", {"urls": ["a"]}, "WebFetch", {"urls": ["a"]}),
    ("ls", {"path": "."}, "mcp__pi__ls", {"path": "."}),
]


@pytest.mark.parametrize(("local", "args", "wire", "expected"), OUTBOUND)
def test_outbound(local: str, args: dict[str, Any], wire: str, expected: dict[str, Any]) -> None:
    call = ENG.outbound_call(local, args)
    assert (call.name, call.arguments) == (wire, expected)


def test_non_object_arguments_pass_through() -> None:
    for value in (None, "raw partial json", [1], 3):
        assert ENG.inbound_call("Read", value, registered=PI).arguments == value
        assert ENG.outbound_call("read", value).arguments == value


def test_wire_schema_strategies() -> None:
    local_edit = {"type": "object", "properties": {"path": {}, "edits": {"type": "array"}}}
    hybrid = ENG.wire_schema("edit", local_edit)
    assert set(hybrid["properties"]) == {
        "file_path",
        "old_string",
        "new_string",
        "replace_all",
        "edits",
    }
    assert hybrid["required"] == ["file_path"]
    canonical = ENG.wire_schema("read", {"type": "object"})
    assert "file_path" in canonical["properties"]
    own = {"type": "object", "properties": {"path": {}}}
    assert ENG.wire_schema("ls", own) is own  # no binding: the local schema as it is


def test_adapts_arguments() -> None:
    assert ENG.adapts_arguments("Read", PI)
    assert ENG.adapts_arguments("Edit_ide", PI)
    assert not ENG.adapts_arguments("Glob", PI)  # bound, but no operations and no repair
    assert not ENG.adapts_arguments("mcp__pi__ls", PI)
    assert not ENG.adapts_arguments("Nope", PI)


def test_binding_applies_only_when_it_names_the_tool() -> None:
    # pi-anthropic-messages has no bindings stage: read -> Read by capitalisation, no adapter.
    eng = bridge_rules.load("pi-anthropic-messages")
    assert eng.inbound_call("Read", {"file_path": "a"}, ["read"]).arguments == {"file_path": "a"}


def test_explain_traces_the_arguments_through_each_operation() -> None:
    args = {"command": "ls", "timeout": 2000, "description": "list"}
    section = ENG.explain("bash", args=args).to_dict()["arguments"]
    assert [op["op"] for op in section["operations"]] == ["drop", "scale"]
    assert all(
        op["file"].endswith("default.yaml") and op["line"] > 0 for op in section["operations"]
    )
    assert section["arguments"]["after"] == [
        {"command": "ls", "timeout": 2000},
        {"command": "ls", "timeout": 2},
    ]
    assert section["arguments"]["after"][-1] == ENG.inbound_call("Bash", args, ["bash"]).arguments
