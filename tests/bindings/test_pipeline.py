"""Bash trailing-extractor stripping, data-driven from real commands (pi-tool-guard 0.2.1)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

import bridge_rules
from bridge_rules.repair.pipeline import strip_extractors
from bridge_rules.repair.rules import NOTE_KEY

CASES: list[dict[str, Any]] = YAML(typ="safe").load(
    (Path(__file__).parent / "data" / "pipelines.yaml").read_text(encoding="utf-8")
)
EXTRACTORS = "head tail grep egrep fgrep rg sed awk cut sort uniq wc less more column jq yq tr"
GUARD = bridge_rules.load("pi-tool-guard", seal_key=b"a key for the pipeline tests")


def test_the_table_is_the_size_of_pi_tool_guards_own() -> None:
    assert len(CASES) >= 45


@pytest.mark.parametrize("case", CASES, ids=[c["command"] or "<empty>" for c in CASES])
def test_strip(case: dict[str, Any]) -> None:
    result = strip_extractors(case["command"], set(EXTRACTORS.split()))
    if case.get("unchanged"):
        assert result is None
    else:
        assert result is not None
        assert (result.cleaned, result.removed) == (case["cleaned"], case["removed"])


@pytest.mark.parametrize("case", CASES, ids=[c["command"] or "<empty>" for c in CASES])
def test_profile_records_what_it_removed_out_of_band(case: dict[str, Any]) -> None:
    args = {"command": case["command"], "timeout": 5}
    call = GUARD.inbound_call("bash", args)
    if case.get("unchanged"):
        assert call.arguments == args
        assert not call.notes
    else:
        # the agent gets the stripped command and nothing else: no _piToolGuard* keys
        assert call.arguments == {"command": case["cleaned"], "timeout": 5}
        assert call.notes["_piToolGuardOriginalCommand"] == case["command"]
        assert call.notes["_piToolGuardRemoved"] is True
        assert call.notes["_piToolGuardPipeline"] == case["removed"]
        note = call.notes[NOTE_KEY]
        assert (note.original, " | ".join(note.commands)) == (case["command"], case["removed"])
