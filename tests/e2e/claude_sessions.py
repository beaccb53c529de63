"""Ten-turn sessions of a real client through ``serve --workers 2 --upstream claude-code``,
for the e2e test (test_e2e_claude_code_sessions.py) and the benchmark
(benchmarks/bench_claude_code_sessions.py) alike.

A session is ten user turns, each sent after the answer to the one before. In five of
them the scripted model endpoint first proposes one of Claude Code's tools (Read, Edit,
Bash); the client runs it with its own tool and sends the result, and the endpoint then
answers ``TURN-n-DONE``. Every reply carries a usage of its own (all four token counts
distinct from request to request), so a client's usage can be checked against the
endpoint's log request by request. A byte relay in front of ``serve`` (timing_relay.py)
times each request as the client sees it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from fake_upstream import Script
from scripted import TEST_CLAUDE, ScriptedEndpoint, calls, done
from serve_process import serving
from timing_relay import Timed, TimingRelay

TOKENS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
HELLO = "Hello from the pi e2e test file.\nSecond line: 42.\n"
APPENDED = "Third line: appended.\n"
FINAL = {  # what the project's files hold once the session is over
    "hello.txt": HELLO.replace("42", "43"),
    "copy.txt": (HELLO + APPENDED).replace("42", "44"),
}


@dataclass(frozen=True)
class Turn:
    prompt: str
    call: tuple[str, dict[str, Any]] | None = None  # what the model proposes first, if any


def session_turns(project: Path | None, described: bool = False) -> list[Turn]:
    """The ten turns. File paths are relative to the project, or absolute under ``project``
    when given (opencode's tools want them so); ``described`` adds the ``description``
    opencode's bash requires."""

    def path(name: str) -> str:
        return str(project / name) if project is not None else name

    def bash(command: str) -> tuple[str, dict[str, Any]]:
        args = {"command": command, **({"description": "Run it"} if described else {})}
        return ("Bash", args)

    def edit(name: str, old: str, new: str) -> tuple[str, dict[str, Any]]:
        return ("Edit", {"file_path": path(name), "old_string": old, "new_string": new})

    return [
        Turn("Read hello.txt.", ("Read", {"file_path": path("hello.txt")})),
        Turn("What does its second line say?"),
        Turn("Change 42 to 43 in hello.txt.", edit("hello.txt", "42", "43")),
        Turn("Is anything else in it worth changing?"),
        Turn("Copy hello.txt to copy.txt.", bash("cp hello.txt copy.txt")),
        Turn("Good. What did the copy get?"),
        Turn("Append a third line to copy.txt.", bash(f"printf '{APPENDED[:-1]}\\n' >> copy.txt")),
        Turn("Which files have we touched so far?"),
        Turn("Change 43 to 44 in copy.txt.", edit("copy.txt", "43", "44")),
        Turn("Thanks, that is all."),
    ]


def usage(n: int) -> dict[str, Any]:
    """The n-th reply's usage: every count different from every other request's."""
    return {
        "input_tokens": 1000 + 13 * n,
        "output_tokens": 20 + 3 * n,
        "cache_creation_input_tokens": 5000 + 101 * n,
        "cache_read_input_tokens": 700 + 37 * n,
    }


def endpoint_for(turns: list[Turn]) -> ScriptedEndpoint:
    """A scripted endpoint that walks the client through ``turns``: per turn a tool call
    (when the turn has one) and then ``TURN-n-DONE``."""
    replies: list[Script] = []
    for n, turn in enumerate(turns, 1):
        if turn.call is not None:
            replies.append(calls(turn.call))
        replies.append(done(f"TURN-{n}-DONE"))
    for n, reply in enumerate(replies):
        reply.usage = usage(n)
    return ScriptedEndpoint(replies)


WARM: dict[str, list[str]] = {
    "off": ["--claude-spares", "0"],
    "spares": ["--claude-spares", "2"],  # the default
    "prepare": ["--claude-spares", "2", "--claude-prepare"],
}
"""The warm paths' settings, by name: none, spare CLIs, spares with the history replayed."""


@cache
def warm_modes() -> list[str]:
    """The entries of WARM this ``serve`` can run: "off" always; the others when
    ``serve --help`` lists every option they pass."""
    cli = Path(sys.executable).with_name("bridge-rules")
    shown = subprocess.run(
        [str(cli), "serve", "--help"], capture_output=True, text=True, check=False, timeout=60
    ).stdout
    return ["off"] + [
        name
        for name, options in WARM.items()
        if name != "off" and all(o in shown for o in options if o.startswith("--"))
    ]


@dataclass
class SessionRun:
    """What one session left: the client's view, the endpoint's log, the relay's timings."""

    answers: list[str]  # the text the client got at the end of each turn
    usage: list[dict[str, int]]  # per model request, as the client got it (TOKENS)
    endpoint: ScriptedEndpoint
    timings: list[Timed]
    project: Path
    spares: list[int]  # per request a spare answered: 1 + the history lines it had replayed


def turn_ms(timings: list[Timed], floor: float = 0.0) -> list[float]:
    """Per user turn, the time to the first body byte of the request that carried its
    prompt, less ``floor`` (the endpoint's own time)."""
    return [(t.ms or float("nan")) - floor for t in timings if opens_turn(t.json)]


def opens_turn(body: Any) -> bool:
    """A model request whose last message is the user's prompt (not tool results): the
    request that starts a turn. Side requests without tools (a title) are not turns."""
    if not isinstance(body, dict) or not body.get("tools") or not body.get("messages"):
        return False
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return True
    return not any(b.get("type") == "tool_result" for b in content)


@contextmanager
def claude_serve(
    endpoint: ScriptedEndpoint, warm: str, *rules: str, log: Path | None = None
) -> Iterator[TimingRelay]:
    """``serve --workers 2 --upstream claude-code`` as a process, its CLI's model endpoint
    ``endpoint``, with the settings of ``WARM[warm]`` (for "off", only when this serve has
    them: without them it is today's behaviour); yields a timing relay in front of it.
    ``log`` takes serve's stderr (spares_taken reads it)."""
    options = ["--upstream", "claude-code", "--workers", "2"]
    if os.environ.get(TEST_CLAUDE):
        options += ["--claude-path", os.environ[TEST_CLAUDE]]
    if warm in warm_modes():
        options += WARM[warm]
    elif warm != "off":
        raise ValueError(f"this serve cannot run warm mode {warm!r}")
    for ref in rules:
        options += ["--rules", ref]
    env = {"ANTHROPIC_BASE_URL": endpoint.url, "ANTHROPIC_API_KEY": "sk-ant-test"}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        with serving(*options, log=log) as url, TimingRelay(url) as relay:
            yield relay
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def spares_taken(log: Path) -> list[int]:
    """The access lines' ``spare`` of every request a spare CLI answered: 1, plus the lines
    of history it had replayed ahead (``--claude-prepare``)."""
    taken: list[int] = []
    for line in log.read_text().splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue  # not an access line
        if isinstance(record, dict) and record.get("spare"):
            taken.append(int(record["spare"]))
    return taken
