"""pi with a subscription key (pi-ai's OAuth mode) works with the default rules.

In that mode pi registers its core tools under Claude Code's names (``Read``, ``Bash``,
``Edit``, ``Write``) but keeps its own argument schemas (``Read {path}``). The captures
are real requests pi sent that way; the default rules must advertise Claude Code's
schemas for them, bring the model's Claude Code calls back in pi's shapes, and replay
pi's calls in history in Claude Code's shapes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

import bridge_rules

CAPTURES = Path(__file__).resolve().parent / "captures"
ENGINE = bridge_rules.load()
PI_SHAPES = {"Read": {"path"}, "Bash": {"command"}, "Edit": {"path", "edits"}, "Write": {"path"}}


def capture(name: str) -> Any:
    return orjson.loads((CAPTURES / name).read_bytes())


def test_the_capture_is_pi_in_oauth_mode() -> None:
    sent = capture("pi-oauth-alltools-parallel-turn1.json")
    tools = {t["name"]: set(t["input_schema"]["properties"]) for t in sent["tools"]}
    assert {name: tools[name] & shape for name, shape in PI_SHAPES.items()} == PI_SHAPES


def test_tools_go_out_with_claude_codes_schemas_under_the_names_pi_gave() -> None:
    result = ENGINE.outbound(capture("pi-oauth-alltools-parallel-turn1.json"), env={})
    tools = {t["name"]: t["input_schema"] for t in result.payload["tools"]}
    for name in ("Read", "Edit", "Write"):
        assert "file_path" in tools[name]["properties"], name
        assert "path" not in tools[name]["properties"], name
    assert {"command", "description"} <= set(tools["Bash"]["properties"])
    assert not {"Read", "Bash", "Edit", "Write"} & set(result.renames)  # names kept as sent
    assert {"Read", "Bash", "Edit", "Write"} <= set(result.registered)


@pytest.mark.parametrize(
    ("wire", "local"),
    [
        (("Read", {"file_path": "hello.txt"}), ("Read", {"path": "hello.txt"})),
        (
            ("Edit", {"file_path": "a.txt", "old_string": "42", "new_string": "43"}),
            ("Edit", {"path": "a.txt", "edits": [{"oldText": "42", "newText": "43"}]}),
        ),
        (
            ("Bash", {"command": "cat a.txt", "timeout": 5000, "description": "show it"}),
            ("Bash", {"command": "cat a.txt", "timeout": 5}),
        ),
        (
            ("Write", {"file_path": "b.txt", "content": "x"}),
            ("Write", {"path": "b.txt", "content": "x"}),
        ),
    ],
    ids=["Read", "Edit", "Bash", "Write"],
)
def test_the_models_calls_come_back_in_pis_shapes_and_replay_as_sent(
    wire: tuple[str, dict[str, Any]], local: tuple[str, dict[str, Any]]
) -> None:
    registered = ["Read", "Bash", "Edit", "Write", "Grep", "find", "ls"]
    call = ENGINE.inbound_call(wire[0], wire[1], registered)
    assert (call.name, call.arguments) == local
    replayed = ENGINE.outbound_call(*local)
    assert replayed.name == wire[0]
    if wire[0] in ("Read", "Write"):
        assert replayed.arguments == wire[1]
