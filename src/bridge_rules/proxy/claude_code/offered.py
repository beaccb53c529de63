"""The models a Claude Code CLI offers, as its own ``initialize`` answer lists them.

The CLI has no Models API, but its control protocol's ``initialize`` response names every
model the ``/model`` picker offers: each alias (``default``, ``opus``, ``sonnet``, ...) with
the model id it resolves to (``resolvedModel``), its display name and a description. That
is what ``GET /v1/models`` on a Claude Code route lists, aliases resolved, each id once. It
is asked once per worker (no model call, no credentials needed) and remembered; a CLI
that cannot answer leaves the listing to the rules.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from dataclasses import dataclass
from typing import Any

_ASK = (
    json.dumps(
        {"type": "control_request", "request_id": "br_models", "request": {"subtype": "initialize"}}
    )
    + "\n"
).encode()
_ARGS = ("-p", "--output-format", "stream-json", "--verbose", "--input-format", "stream-json")


@dataclass(frozen=True)
class Offered:
    """One model the CLI offers: its id, a name to show, and the aliases that reach it."""

    id: str
    display_name: str
    aliases: tuple[str, ...]


def read_offered(answer: Any) -> list[Offered]:
    """The models of an ``initialize`` response (its ``response`` object), aliases merged.
    A model is shown by the head of an alias's description (``Opus 5.5``), never by the
    ``default`` alias's, which describes the alias rather than the model."""
    entries = answer.get("models") if isinstance(answer, dict) else None
    aliases: dict[str, list[str]] = {}
    names: dict[str, str] = {}
    for entry in entries if isinstance(entries, list) else []:
        model = entry.get("resolvedModel") if isinstance(entry, dict) else None
        if not isinstance(model, str) or not model:
            continue
        alias = entry.get("value")
        aliases.setdefault(model, []).extend([alias] if isinstance(alias, str) else [])
        said = entry.get("description")
        if alias != "default" and model not in names and isinstance(said, str) and said:
            names[model] = said.split(" \u00b7 ")[0]
    return [Offered(m, names.get(m, m), tuple(a)) for m, a in aliases.items()]


async def ask_cli(claude_path: str, timeout: float = 30.0) -> list[Offered] | None:
    """Start the CLI, ask ``initialize``, read the answer, stop it; None when it fails."""
    with tempfile.TemporaryDirectory(prefix="bridge-rules-models-") as scratch:
        try:
            process = await asyncio.create_subprocess_exec(
                claude_path,
                *_ARGS,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL,
                cwd=scratch,
                env=dict(os.environ),
                limit=16 * 1024 * 1024,
            )
        except OSError:
            return None
        try:
            assert process.stdin is not None
            assert process.stdout is not None
            process.stdin.write(_ASK)
            await process.stdin.drain()
            return await asyncio.wait_for(_answer(process.stdout), timeout)
        except (TimeoutError, OSError, ValueError, asyncio.LimitOverrunError):
            return None
        finally:
            if process.returncode is None:
                process.kill()
            await process.wait()


async def _answer(stdout: asyncio.StreamReader) -> list[Offered] | None:
    while line := await stdout.readline():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        response = event.get("response") if isinstance(event, dict) else None
        if event.get("type") == "control_response" and isinstance(response, dict):
            if response.get("request_id") == "br_models" and response.get("subtype") == "success":
                return read_offered(response.get("response"))
            return None
    return None
