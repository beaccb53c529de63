"""pi's own tools (read, edit, bash, with pi's schemas) for an agent written in Python with
the ``anthropic`` SDK, and the code that runs their calls in the agent's project: the
default rules map Claude Code's tools to these shapes, as they do for pi itself."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

TOOLS: Any = [
    {
        "name": "read",
        "description": "Read a file",
        "input_schema": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
    },
    {
        "name": "edit",
        "description": "Replace text in a file",
        "input_schema": {
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "edits": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "oldText": {"type": "string"},
                            "newText": {"type": "string"},
                        },
                    },
                },
            },
            "required": ["path", "edits"],
        },
    },
    {
        "name": "bash",
        "description": "Run a shell command",
        "input_schema": {
            "type": "object",
            "properties": {"command": {"type": "string"}},
            "required": ["command"],
        },
    },
]


def run_tool(work: Path, name: str, args: dict[str, Any]) -> str:
    """Run one call in ``work`` (a relative path is taken from there); what it printed."""
    if name == "read":
        return Path(work, args["path"]).read_text()
    if name == "edit":
        path = Path(work, args["path"])
        for edit in args["edits"]:
            path.write_text(path.read_text().replace(edit["oldText"], edit["newText"]))
        return "edited"
    if name == "bash":
        done_ = subprocess.run(
            args["command"], shell=True, cwd=work, capture_output=True, text=True, check=False
        )
        return done_.stdout + done_.stderr
    raise AssertionError(f"the agent got a call for a tool it does not have: {name}")
