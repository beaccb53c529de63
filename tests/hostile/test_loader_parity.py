"""The event-built loader reads plain scalars exactly as ruamel's own YAML 1.2 loader does.

The loader builds data from libyaml's events with a short path for scalars that
can only be strings; this pins that path to ruamel's resolution on the words and
shapes where the two could differ.
"""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from ruamel.yaml import YAML

from bridge_rules.loader import parse_text

SCALARS = [
    "true", "True", "TRUE", "false", "FALSE", "tRue", "yes", "no", "on", "off", "y", "n",
    "null", "Null", "NULL", "nULL", "~", "", "nulls", "truest", "<<x", "=", "==",
    "1", "-1", "+1", "0x1F", "0o17", "017", "1_000", "1.5", "-.5", ".5", "1e3", "1.0e+3",
    "2001-12-14", "2001-12-14t21:59:43.10-05:00", "12:30", "1:20", "0b101", ".", "+",
    "tool_1", "Tool", "nothing", "falsey", "NaNa", "Wire_1", "mcp__pi__read", "-x", ".x",
]  # fmt: skip


def _reference(value: Any) -> Any:
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    return str(value)


@pytest.mark.parametrize("scalar", SCALARS)
def test_plain_scalars_resolve_like_ruamel(scalar: str) -> None:
    text = f"bridge-rules: 1\nvalue: {scalar}\nlist: [{scalar}]\n"
    expected = YAML(typ="rt", pure=True).load(text)
    doc, diags = parse_text(text, "x.yaml")
    assert not diags, [d.line() for d in diags]
    assert doc is not None
    assert doc.data["value"] == _reference(expected["value"])
    assert doc.data["list"] == [_reference(v) for v in expected["list"]]
    assert type(doc.data["value"]) is type(_reference(expected["value"]))


def test_anchors_expand_with_their_positions() -> None:
    text = "bridge-rules: 1\nbase: &b\n  x: [1, {y: 2}]\ncopy: *b\n"
    doc, diags = parse_text(text, "x.yaml")
    assert not diags
    assert doc is not None
    assert doc.data["copy"] == {"x": [1, {"y": 2}]}
    assert doc.data["copy"] is not doc.data["base"]
    assert str(doc.source_map.key_span(("copy", "x", 1, "y"))) == "x.yaml:3:11"
    assert str(doc.source_map.value_span(("copy",))) == "x.yaml:4:7"


def _held(root: object) -> int:
    """How many objects ``root`` holds, following containers and instances (not classes,
    modules or functions, which every process shares anyway)."""
    import gc
    import types

    skip = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType)
    seen: set[int] = set()
    todo = [root]
    while todo:
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, skip):
            continue
        seen.add(id(obj))
        todo.extend(gc.get_referents(obj))
    return len(seen)


def test_one_set_of_scalar_tables_serves_every_document_and_thread_and_keeps_nothing() -> None:
    # The tables are built once per process; a constructor that remembered each node it
    # built would then grow with every file a long-lived process (serve, an IDE) reads.
    import threading

    from bridge_rules.loader.events import scalars

    rows = "".join(
        f"  k{i}: [{i}, {i}.5, true, null, 2001-12-{i % 28 + 1:02d}]\n" for i in range(300)
    )
    expected = {f"k{i}": [i, i + 0.5, True, None, f"2001-12-{i % 28 + 1:02d}"] for i in range(300)}
    shared = scalars()
    parse_text("a:\n" + rows, "t.yaml")  # whatever is built on first use
    before = _held(shared)
    results: list[Any] = []

    def load() -> None:
        doc, _ = parse_text("a:\n" + rows, "t.yaml")
        assert doc is not None
        results.append(doc.data["a"])

    threads = [threading.Thread(target=load) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [expected] * 4
    assert scalars() is shared
    assert _held(shared) == before
