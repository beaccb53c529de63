"""A stdio MCP server, ``mine`` in the configs :func:`mcp_config` writes: one tool,
``shout`` (its ``text`` upper-cased), and, given a secret as its argument, one resource,
``note://secret``, that holds it.

The Claude Code CLI the tests start runs it (``claude_mcp_config``); the tests that need an
operator's own MCP server share it rather than each writing one out as a string.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

SHOUT = {
    "name": "shout",
    "description": "upper-case a text",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
}
RESOURCE = "note://secret"


def mcp_config(folder: Path, *args: str) -> str:
    """A config file in ``folder`` naming this server ``mine``, run with ``args``."""
    config = {"mcpServers": {"mine": {"command": sys.executable, "args": [__file__, *args]}}}
    path = folder / "m.json"
    path.write_text(json.dumps(config))
    return str(path)


def _result(msg: dict[str, Any], secret: str | None) -> dict[str, Any]:
    method = msg["method"]
    if method == "initialize":
        capabilities: dict[str, Any] = {"tools": {}}
        if secret is not None:
            capabilities["resources"] = {}
        return {
            "protocolVersion": msg["params"]["protocolVersion"],
            "capabilities": capabilities,
            "serverInfo": {"name": "mine", "version": "1"},
        }
    if method == "tools/list":
        return {"tools": [SHOUT]}
    if method == "tools/call":
        return {"content": [{"type": "text", "text": msg["params"]["arguments"]["text"].upper()}]}
    if method == "resources/list" and secret is not None:
        return {"resources": [{"uri": RESOURCE, "name": "secret"}]}
    if method == "resources/read" and secret is not None:
        return {"contents": [{"uri": RESOURCE, "text": secret}]}
    return {}


def main() -> None:
    secret = sys.argv[1] if len(sys.argv) > 1 else None
    for line in sys.stdin:
        msg = json.loads(line)
        if "id" in msg:
            answer = {"jsonrpc": "2.0", "id": msg["id"], "result": _result(msg, secret)}
            print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
