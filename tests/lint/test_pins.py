"""The pinned schemas: checksums, the reference pin, drift facts, and the pin script's folding."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

from bridge_rules.pins import available, load_pin

ROOT = Path(__file__).resolve().parents[2]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "pin_schemas", ROOT / "scripts" / "pin_schemas.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["pin_schemas"] = module
    spec.loader.exec_module(module)
    return module


def test_checksums_are_recorded_for_every_pin() -> None:
    sums = (ROOT / "schemas" / "SHA256SUMS").read_text(encoding="utf-8").splitlines()
    recorded = dict(reversed(line.split("  ", 1)) for line in sums)
    pins = sorted(
        p.relative_to(ROOT / "schemas").as_posix() for p in (ROOT / "schemas").glob("*/*.json")
    )
    assert sorted(recorded) == pins
    for name, digest in recorded.items():
        assert hashlib.sha256((ROOT / "schemas" / name).read_bytes()).hexdigest() == digest, name


# The SHA-256 of the reference pin (reference/pins/claude-code-2.1.330.json in the project's
# design material), recorded here so that the check needs nothing outside the repository.
REFERENCE_PIN_SHA256 = "b621363ff709b8177e785a3224b9f32b3a81ae9daf48940d5584e5e01adf7731"


def test_latest_pin_is_the_reference_pin_plus_what_the_binary_sends() -> None:
    """2.1.330 is the d.ts reference pin plus the tools a runtime capture has and it lacks."""
    packaged = json.loads((ROOT / "schemas" / "claude-code" / "2.1.330.json").read_text())
    capture = ROOT / "tests" / "pins" / "data" / "claude-code@2.1.330.json"
    captured = json.loads(capture.read_text())["tools"]
    assert set(captured) <= set(packaged["tools"])
    added = sorted(n for n, how in packaged["mapping_evidence"].items() if how == "runtime-capture")
    assert added == ["ListAgents", "SendMessage", "Skill"]
    for name in added:
        schema = {k: v for k, v in captured[name]["input_schema"].items() if k != "$schema"}
        assert packaged["tools"][name] == schema
    assert packaged["provenance"]["method"] == "type-declarations+runtime-capture"
    # What neither capture (the flags of docs/pins.md, and a session with MCP servers) sent.
    runtime = json.loads((capture.parent / "claude-code-2.1.330.runtime.json").read_text())
    sent = set(captured) | set(runtime["tools"])
    assert packaged["declared_only"] == sorted(set(packaged["tools"]) - sent, key=str.lower)
    assert len(packaged["declared_only"]) == 11
    for name in added:
        del packaged["tools"][name], packaged["mapping_evidence"][name]
    del packaged["provenance"], packaged["declared_only"]
    rendered = _script().render(packaged).encode()
    assert hashlib.sha256(rendered).hexdigest() == REFERENCE_PIN_SHA256


def test_pins_show_real_drift() -> None:
    assert available("claude-code") == ["2.1.0", "2.1.322", "2.1.330", "2.1.331"]
    old, cited, latest = (load_pin(f"claude-code@{v}") for v in ("2.1.0", "2.1.322", "2.1.330"))
    assert {"TaskOutput", "KillShell", "Task"} <= set(old.tools)
    assert not {"TaskOutput", "KillShell", "Task"} & set(latest.tools)
    assert "KillShell" in latest.aliases["TaskStop"]
    assert "Agent" in cited.tools
    assert "TaskStop" in cited.tools
    assert "allow_large" in latest.tools["Read"]["properties"]
    assert "allow_large" not in old.tools["Read"]["properties"]


def test_tuple_unions_fold_back_into_bounded_arrays() -> None:
    script = _script()
    item = {"type": "string"}
    node = {
        "description": "one to three, see * / here",
        "anyOf": [
            {"type": "array", "items": item, "minItems": 1, "maxItems": 1},
            {"type": "array", "items": [item, item], "minItems": 2, "maxItems": 2},
            {"type": "array", "items": [item, item, item], "minItems": 3, "maxItems": 3},
        ],
    }
    assert script.postprocess(node) == {
        "description": "one to three, see */ here",
        "maxItems": 3,
        "minItems": 1,
        "type": "array",
        "items": item,
    }
    rest = {"type": "array", "items": [item], "additionalItems": item, "maxItems": 9}
    assert script.postprocess(rest) == {
        "type": "array",
        "items": item,
        "maxItems": 9,
        "minItems": 1,
    }
    mixed = {"anyOf": [{"type": "array", "items": item, "minItems": 1, "maxItems": 1}, item]}
    assert script.postprocess(mixed) == mixed


def test_build_pin_names_tools_by_version() -> None:
    script = _script()
    generated = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "definitions": {
            "ToolInputSchemas": {
                "anyOf": [{"$ref": "#/definitions/AgentInput"}, {"$ref": "#/definitions/McpInput"}]
            },
            "AgentInput": {"type": "object", "properties": {"prompt": {"type": "string"}}},
            "McpInput": {"type": "object", "additionalProperties": {}},
        },
    }
    dts = "export interface AgentInput {\n  prompt: string;\n}\n"
    old, problems = script.build_pin("2.1.0", dts, generated)
    new, _ = script.build_pin("2.1.330", dts, generated)
    assert list(old["tools"]) == ["Task"]
    assert list(new["tools"]) == ["Agent"]
    assert new["aliases"] == {"Agent": ["Task"]}
    assert "mcp__*" in new["wildcard_tools"]
    assert problems == ["AgentInput: required set differs"]
    assert script.render(new) == script.render(json.loads(script.render(new)))
