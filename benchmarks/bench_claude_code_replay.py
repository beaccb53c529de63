"""Where turn 100's time goes through ``serve --upstream claude-code``: the history replay.

A request that takes a started spare still writes its whole history to the CLI, one user
turn at a time (:meth:`~bridge_rules.proxy.claude_code.session.Session._replay`). This
measures, with the real CLI and a fake endpoint that answers at once, for a conversation
of ``--turns`` turns:

- per replayed user turn, p50: the time from our write to the CLI's ``result`` line
  at the transport (the CLI's own), the same to the ``ResultMessage`` out of the SDK
  (adds our side: the SDK's reader task and parsing), and the CLI's CPU time per turn
  (``/proc``, its whole process group);
- the first event of turn N through a started spare (today's warm path) and through a
  cold process (today's ``--claude-spares 0``);
- the ``--resume`` path: the same conversation's transcript, as the CLI itself wrote it
  (session persistence on, its scratch directory's name replaced), resumed by a new
  process that is sent only the last user turn. A spare cannot be started with it (the
  flag names the session, and the CLI refuses ``--await-claim`` with ``--resume``), so
  this is a cold start; the endpoint's request is compared with the cold path's, but for
  the values the CLI makes up per run (scratch name, device id, session id).

    PYTHONPATH=src python benchmarks/bench_claude_code_replay.py [--turns N] [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "e2e"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "claude_code"))
from bench_claude_code import conversation as body
from line_by_line import LineByLine
from scripted import ScriptedEndpoint, done

from bridge_rules.proxy.claude_code import bundled_claude, session
from bridge_rules.proxy.claude_code.plan import plan
from bridge_rules.proxy.claude_code.terms import Policy

PER_RUN = [
    (rb"bridge-rules-claude-[a-z0-9_]+", b"<scratch>"),
    (rb'(device_id|session_id)\\":\\"[0-9a-f-]+', b"<id>"),
]
EXTRA_ARGS: dict[str, str | None] = {}
"""Flags the resume experiment adds to the command line (``"-"``: removed)."""
_options = session.ClaudeAgentOptions


def _with_extra(**kw: Any) -> Any:
    args = dict(kw["extra_args"])
    for flag, value in EXTRA_ARGS.items():
        if value == "-":
            args.pop(flag, None)
        else:
            args[flag] = value
    return _options(**{**kw, "extra_args": args})


session.ClaudeAgentOptions = _with_extra  # type: ignore[misc]


def masked(data: bytes) -> bytes:
    for pattern, stand_in in PER_RUN:
        data = re.sub(pattern, stand_in, data)
    return data


def group_cpu_ms(pgid: int) -> float:
    """CPU time (user + system) of every process in group ``pgid``."""
    ticks = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:
            ticks += int(fields[11]) + int(fields[12])
    return ticks * 1000 / os.sysconf("SC_CLK_TCK")


def new(
    turns: int, last_only: bool = False, kind: type[session.Session] = session.Session
) -> session.Session:
    cli_plan = plan(body(turns))
    if last_only:
        cli_plan.lines = cli_plan.lines[-1:]
    return kind(cli_plan, bundled_claude() or "claude", Policy(), os.environ, 60)


async def first_event_ms(s: session.Session) -> float:
    started = time.perf_counter()
    took = 0.0
    async for _ in s.events():
        took = took or (time.perf_counter() - started) * 1000
    return took


async def per_turn(turns: int) -> tuple[float, float, float]:
    """p50 per replayed user turn: at the transport, out of the SDK; CLI CPU per turn."""
    s = new(turns)
    read = s.process._read
    seen: list[float] = []

    async def timed_read() -> Any:
        async for message in read():
            if message.get("type") == "result":
                seen.append(time.perf_counter())
            yield message

    s.process._read = timed_read  # type: ignore[method-assign]
    assert await s.start(), s.process.stderr_note()
    await asyncio.sleep(0.5)  # its start-up over
    messages = s._messages()
    assert s.process.proc is not None
    pgid = s.process.proc.pid
    cpu = group_cpu_ms(pgid)
    cli, ours = [], []
    lines = s.plan.lines[:-1]
    for n, line in enumerate(lines):
        if line["type"] != "user":
            continue
        written = time.perf_counter()
        data = "".join(json.dumps(one) + "\n" for one in lines[max(n - 1, 0) : n + 1])
        await s.process.write(data if n else json.dumps(line) + "\n")
        await s._until_result(messages)
        ours.append((time.perf_counter() - written) * 1000)
        cli.append((seen[-1] - written) * 1000)
    cpu = (group_cpu_ms(pgid) - cpu) / len(cli)
    await s.close()
    return statistics.median(cli), statistics.median(ours), cpu


async def warm(turns: int, kind: type[session.Session]) -> float:
    spare = new(turns, kind=kind)
    assert await spare.start(), spare.process.stderr_note()
    await asyncio.sleep(1.0)  # started while the client paused
    return await first_event_ms(spare)


async def paths(turns: int, endpoint: ScriptedEndpoint) -> tuple[float, float, float, float, bool]:
    """Turn ``turns`` through a spare, written line by line (before) and batched (now),
    cold, and cold by ``--resume``, one after the other so that they meet the same load."""
    before = await warm(turns, LineByLine)
    now = await warm(turns, session.Session)
    cold = await first_event_ms(new(turns))
    return (before, now, cold, *await resumed(turns, endpoint))


async def resumed(turns: int, endpoint: ScriptedEndpoint) -> tuple[float, bool]:
    """The cold path with persistence on, then a new process resuming its transcript."""
    EXTRA_ARGS.clear()
    EXTRA_ARGS["no-session-persistence"] = "-"
    writer = new(turns)
    writer.close = writer.process.close  # type: ignore[method-assign]  # keep its scratch
    try:
        await first_event_ms(writer)
        cold_body = endpoint.requests[-1].body
        found = sorted((writer._scratch / "home" / ".claude" / "projects").glob("*/*.jsonl"))
        rows = found[0].read_text().splitlines()
        # the history: every row before the last user turn's own (its queue rows kept)
        last = min(i for i, row in enumerate(rows) if '"type":"user"' in row and "last q" in row)
        EXTRA_ARGS["resume"] = found[0].stem
        reader = new(turns, last_only=True)
        old, now = writer._scratch.name, reader._scratch.name
        text = "\n".join(rows[:last]) + "\n"
        text = text.replace(old, now).replace(old.replace("_", "-"), now.replace("_", "-"))
        project = "-" + str(reader._scratch / "work").strip("/").replace("/", "-")
        place = reader._scratch / "home" / ".claude" / "projects" / project.replace("_", "-")
        place.mkdir(parents=True)
        (place / found[0].name).write_text(text)
        took = await first_event_ms(reader)
    finally:
        EXTRA_ARGS.clear()
        await session.Session.close(writer)
    return took, masked(endpoint.requests[-1].body) == masked(cold_body)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()}")
    with ScriptedEndpoint([done("hi")]) as endpoint:
        os.environ["ANTHROPIC_BASE_URL"] = endpoint.url
        os.environ["ANTHROPIC_API_KEY"] = "sk-ant-bench"
        splits = [asyncio.run(per_turn(args.turns)) for _ in range(args.runs)]
        cli, ours, cpu = (statistics.median(s[i] for s in splits) for i in range(3))
        print(
            f"per replayed user turn, p50: CLI write->result {cli:.2f} ms, out of the SDK "
            f"{ours:.2f} ms (ours {ours - cli:.2f} ms), CLI CPU {cpu:.2f} ms"
        )
        runs = [asyncio.run(paths(args.turns, endpoint)) for _ in range(args.runs)]
        before, now, cold, resume = (statistics.median(r[i] for r in runs) for i in range(4))
        print(
            f"turn {args.turns}, first event p50: spare written line by line {before:.0f} ms, "
            f"batched {now:.0f} ms; cold {cold:.0f} ms; cold by --resume {resume:.0f} ms "
            f"(the endpoint's requests the same as the cold path's: {all(r[4] for r in runs)})"
        )
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
