"""A stand-in agent for ``pin capture``'s error paths: ``fake_agent.py MODE [URL|CONFIG]``.

Modes: ``stream`` and ``json`` send one request with two tools (streamed or not) and
check the reply; ``stdin`` reads the mode from stdin; ``notools`` sends a request
without tools; ``fail`` writes to stderr and exits 3; ``hang`` sleeps; ``silent``
exits 0 without a request. The URL is the argument, else ``ANTHROPIC_BASE_URL``;
``config`` reads ``{"baseURL": ...}`` from a file.
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.request

TOOLS = [
    {
        "name": "read",
        "description": "Read a file.",
        "input_schema": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
    },
    {
        "name": "ls",
        "description": "List a directory.",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
        "cache_control": {"type": "ephemeral"},
    },
]


def post(base: str, body: dict[str, object]) -> str:
    request = urllib.request.Request(
        base.rstrip("/") + "/v1/messages",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json", "user-agent": "fake-agent/1.0"},
    )
    with urllib.request.urlopen(request, timeout=10) as reply:
        return reply.read().decode()


def main() -> int:
    mode = sys.argv[1]
    if mode == "stdin":  # the mode comes on stdin
        mode = sys.stdin.readline().strip()
    target = sys.argv[2] if len(sys.argv) > 2 else os.environ["ANTHROPIC_BASE_URL"]
    if mode == "config":
        with open(target, encoding="utf-8") as f:
            target, mode = json.load(f)["baseURL"], "json"
    body: dict[str, object] = {"model": "m", "max_tokens": 10, "messages": []}
    if mode == "stream":
        text = post(target, body | {"tools": TOOLS, "stream": True})
        assert "event: message_stop" in text, text
    elif mode == "json":
        reply = json.loads(post(target, body | {"tools": TOOLS}))
        assert reply["stop_reason"] == "end_turn", reply
    elif mode == "notools":
        post(target, body)
    elif mode == "fail":
        sys.stderr.write("starting\nfatal: cannot open config ~/.agent/settings.json\n")
        return 3
    elif mode == "hang":
        sys.stderr.write("waiting for something\n")
        time.sleep(60)
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
