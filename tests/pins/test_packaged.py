"""The packaged pins: every tool the 2.1.330 binary sends, provenance, and what the rules do."""

from __future__ import annotations

import pytest
from pin_fixtures import DATA

import bridge_rules
from bridge_rules.pins import available, load_file, load_pin


@pytest.mark.parametrize("tool", ["Skill", "SendMessage", "ListAgents"])
def test_runtime_only_tools_go_out_under_their_own_name(tool: str) -> None:
    assert load_pin("claude-code@2.1.330").has_tool(tool)
    assert load_pin("claude-code@2.1.331").has_tool(tool)
    assert bridge_rules.load().outbound_name(tool) == tool  # not mcp__pi__Skill any more


def test_every_packaged_pin_records_how_it_was_made() -> None:
    for product in ("claude-code", "pi"):
        for version in available(product):
            pin = load_pin(f"{product}@{version}")
            assert pin.origin == "packaged"
            assert pin.provenance["method"].startswith("type-declarations")
            assert pin.provenance["version"] == version
            assert len(pin.provenance["sha256"]) == 64


def test_the_current_release_is_pinned_from_its_capture() -> None:
    """2.1.331 (npm's latest on 2026-11-24): its d.ts plus its runtime capture."""
    current = load_pin("claude-code@2.1.331")
    captured = load_file(DATA / "claude-code@2.1.331.json")
    assert set(captured.tools) <= set(current.tools)
    assert captured.provenance["method"] == "runtime-capture"
    assert [s["program"] for s in captured.provenance["sources"]] == ["claude"] * 4
