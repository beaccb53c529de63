"""Layering one stage id over many files, against the rule docs/rule-format.md states: a
later file's table entries and settings are laid over the earlier stage, in its place.

The oracle is that sentence as a fold over plain dicts, one file at a time; the compiler
lays them all over in one pass (10,000 files made the file-at-a-time copy quadratic).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.budget import examples

import bridge_rules

LOCALS = [f"t{i}" for i in range(6)]
WIRES = [f"W{i}" for i in range(8)]
layer = st.fixed_dictionaries(
    {"map": st.dictionaries(st.sampled_from(LOCALS), st.sampled_from(WIRES), max_size=4)},
    optional={"enabled": st.booleans()},
)


def _file(stage: dict[str, Any]) -> str:
    entries = ", ".join(f"{k}: {v}" for k, v in stage["map"].items())
    lines = ["bridge-rules: 1", "names:", "  - kind: aliases", "    id: team", "    case: exact"]
    lines.append(f"    map: {{{entries}}}")
    if "enabled" in stage:
        lines.append(f"    enabled: {str(stage['enabled']).lower()}")
    return "\n".join(lines) + "\n"


@settings(max_examples=examples(40), deadline=None)
@given(layers=st.lists(layer, min_size=1, max_size=7))
def test_a_stage_laid_over_file_by_file(
    tmp_path_factory: pytest.TempPathFactory, layers: list[dict[str, Any]]
) -> None:
    root: Path = tmp_path_factory.mktemp("layers")
    for index, stage in enumerate(layers):
        (root / f"r{index}.yaml").write_text(_file(stage), encoding="utf-8")
    table: dict[str, str] = {}
    enabled = True
    for stage in layers:
        table.update(stage["map"])
        enabled = stage.get("enabled", enabled)
    engine = bridge_rules.load(root)
    expected = {name: table.get(name, name) if enabled else name for name in LOCALS}
    assert {name: engine.outbound_name(name) for name in LOCALS} == expected
