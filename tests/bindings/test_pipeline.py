"""Bash trailing-extractor stripping, data-driven from real commands (pi-tool-guard 0.2.1)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

import bridge_rules
from bridge_rules.repair.pipeline import strip_extractors

CASES: list[dict[str, Any]] = YAML(typ="safe").load(
    (Path(__file__).parent / "data" / "pipelines.yaml").read_text(encoding="utf-8")
)
EXTRACTORS = "head tail grep egrep fgrep rg sed awk cut sort uniq wc less more column jq yq tr"
GUARD = bridge_rules.load("pi-tool-guard")


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
def test_profile_records_what_it_removed(case: dict[str, Any]) -> None:
    args = {"command": case["command"], "timeout": 5}
    out = GUARD.inbound_call("bash", args).arguments
    if case.get("unchanged"):
        assert out == args
    else:
        assert out == {
            "command": case["cleaned"],
            "timeout": 5,
            "_piToolGuardOriginalCommand": case["command"],
            "_piToolGuardRemoved": True,
            "_piToolGuardPipeline": case["removed"],
        }
