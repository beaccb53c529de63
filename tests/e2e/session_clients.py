"""The three clients of claude_sessions.py, each running the ten turns its own way and
reporting what it got: the text that ended each turn and the usage of each model request.

- the ``anthropic`` SDK: a streaming loop written here, with pi's tools (pi_tools.py),
  running each call itself in the project;
- pi: one ``pi -p --mode json`` with the ten prompts (pi's print mode sends each after the
  answer to the one before, in one session), its JSON events read back;
- opencode: ``opencode serve`` and its HTTP API, one ``POST /session/{id}/message`` a
  turn, the session's messages read back at the end.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from claude_sessions import TOKENS, Turn
from opencode_driver import call_api, model, opencode_serving
from pi_driver import run_pi
from pi_tools import TOOLS, run_tool

Answers = tuple[list[str], list[dict[str, int]]]


def sdk_session(url: str, project: Path, turns: list[Turn]) -> Answers:
    import anthropic

    client = anthropic.Anthropic(base_url=url, api_key="sk-ant-client", max_retries=0)
    messages: list[Any] = []
    answers: list[str] = []
    usage: list[dict[str, int]] = []
    for turn in turns:
        messages.append({"role": "user", "content": turn.prompt})
        for _ in range(4):
            with client.messages.stream(
                model="claude-sonnet-4-6",
                max_tokens=1024,
                system="You are the test agent.",
                tools=TOOLS,
                messages=messages,
            ) as stream:
                reply = stream.get_final_message()
            usage.append({k: getattr(reply.usage, k) or 0 for k in TOKENS})
            messages.append(
                {"role": "assistant", "content": [b.model_dump() for b in reply.content]}
            )
            if reply.stop_reason != "tool_use":
                break
            messages.append(
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": b.id,
                            "content": run_tool(project, b.name, b.input),
                        }
                        for b in reply.content
                        if b.type == "tool_use"
                    ],
                }
            )
        answers.append("".join(b.text for b in reply.content if b.type == "text"))
    return answers, usage


PI_USAGE = {
    "input": "input_tokens",
    "output": "output_tokens",
    "cacheWrite": "cache_creation_input_tokens",
    "cacheRead": "cache_read_input_tokens",
}


def pi_session(pi: Path, scratch: Path, url: str, turns: list[Turn]) -> Answers:
    """The prompts as positional messages of one ``pi -p`` (run_pi puts the last one after
    ``-p``; pi sends them in order)."""
    prompts = [t.prompt for t in turns]
    run = run_pi(pi, scratch, url, prompts[-1], "--mode", "json", *prompts[:-1])
    assert run.returncode == 0, run.stderr
    answers: list[str] = []
    usage: list[dict[str, int]] = []
    for line in run.stdout.splitlines():
        event = json.loads(line)
        msg = event.get("message") if event.get("type") == "message_end" else None
        if not msg or msg.get("role") != "assistant":
            continue
        usage.append({ours: msg["usage"][theirs] for theirs, ours in PI_USAGE.items()})
        if msg.get("stopReason") != "toolUse":
            answers.append("".join(b["text"] for b in msg["content"] if b["type"] == "text"))
    return answers, usage


def opencode_session(
    opencode: Path, home: Path, project: Path, url: str, turns: list[Turn]
) -> Answers:
    with opencode_serving(opencode, home, project, url, {"title": "ten turns"}) as (api, sid):
        for turn in turns:
            body = {
                "parts": [{"type": "text", "text": turn.prompt}],
                "model": {"providerID": "anthropic", "modelID": model()},
            }
            call_api(f"{api}/session/{sid}/message", body, 180)
        messages = call_api(f"{api}/session/{sid}/message", None, 30)
    return opencode_answers(messages)


def opencode_answers(messages: list[dict[str, Any]]) -> Answers:
    """Per turn the text of its last step; per model request (a ``step-finish`` part) its
    tokens."""
    answers: list[str] = []
    usage: list[dict[str, int]] = []
    for msg in messages:
        if msg["info"]["role"] != "assistant":
            continue
        for part in msg["parts"]:
            if part["type"] == "step-finish":
                t = part["tokens"]
                usage.append(
                    {
                        "input_tokens": t["input"],
                        "output_tokens": t["output"],
                        "cache_creation_input_tokens": t["cache"]["write"],
                        "cache_read_input_tokens": t["cache"]["read"],
                    }
                )
        if msg["info"].get("finish") not in ("tool-calls",):
            answers.append("".join(p["text"] for p in msg["parts"] if p["type"] == "text"))
    return answers, usage


def run_client(
    client: str, agent: Path | None, scratch: Path, url: str, turns: list[Turn]
) -> Answers:
    """The session of ``client`` ("sdk", "pi" or "opencode"; ``agent`` its binary) in
    ``scratch`` (the project is ``scratch/project``) against the proxy at ``url``."""
    project = scratch / "project"
    if agent is None:
        return sdk_session(url, project, turns)
    if client == "pi":
        return pi_session(agent, scratch, url, turns)
    return opencode_session(agent, scratch / "home", project, url, turns)
