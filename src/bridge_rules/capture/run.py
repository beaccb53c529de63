"""Run an agent against the capture endpoint and take the tools of its first request with tools.

The endpoint's URL reaches the agent three ways: ``ANTHROPIC_BASE_URL`` in its
environment, ``{url}`` in its arguments and ``--env`` values, and ``{url}`` in a
``--template`` config file that is rendered into a scratch directory (its path is
``{config}``, its directory ``{config_dir}``; ``{tmp}`` is a scratch directory for a
private ``HOME``). A run that yields no tools raises :class:`CaptureError` with the
reason and the tail of the agent's stderr.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from bridge_rules.capture.endpoint import Endpoint

DUMMY_KEY = "sk-bridge-rules-capture-not-a-key"
TAIL_LINES = 20
TAIL_CHARS = 2000


class CaptureError(Exception):
    """A capture that produced no pin; ``kind`` is timeout, agent-failed, no-tools or no-agent."""

    def __init__(self, kind: str, message: str, tail: str = "") -> None:
        super().__init__(message)
        self.kind = kind
        self.tail = tail


@dataclass(frozen=True)
class Captured:
    tools: list[dict[str, Any]]
    user_agent: str
    requests: int
    returncode: int | None  # None: still running at the timeout, and stopped
    tail: str


def render(text: str, values: Mapping[str, str]) -> str:
    """Replace ``{name}`` placeholders; other braces (JSON, shell) are left alone."""
    for name, value in values.items():
        text = text.replace("{" + name + "}", value)
    return text


def tail(stream: IO[bytes]) -> str:
    stream.seek(0)
    text = stream.read().decode("utf-8", "replace")
    lines = text.rstrip().splitlines()[-TAIL_LINES:]
    return "\n".join(lines)[-TAIL_CHARS:]


def _stop(process: subprocess.Popen[bytes]) -> None:
    """End the agent and whatever it started (it runs in its own process group)."""
    for sig, wait in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 3.0)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


def capture(
    command: Sequence[str],
    *,
    template: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 120.0,
    stdin: Path | None = None,
) -> Captured:
    with (
        tempfile.TemporaryDirectory(prefix="bridge-rules-capture-") as scratch,
        Endpoint() as endpoint,
    ):
        values = {"url": endpoint.url, "tmp": str(Path(scratch) / "tmp")}
        Path(values["tmp"]).mkdir()
        if template is not None:
            config_dir = Path(scratch) / "config"
            config_dir.mkdir()
            config = config_dir / template.name
            config.write_text(render(template.read_text(encoding="utf-8"), values), "utf-8")
            values |= {"config": str(config), "config_dir": str(config_dir)}
        argv = [render(arg, values) for arg in command]
        # The user's real credentials stay out of the capture: a dummy key, and no token.
        child_env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_AUTH_TOKEN"}
        child_env |= {"ANTHROPIC_BASE_URL": endpoint.url, "ANTHROPIC_API_KEY": DUMMY_KEY}
        child_env |= {k: render(v, values) for k, v in (env or {}).items()}
        return _run(
            argv, env=child_env, endpoint=endpoint, timeout=timeout, scratch=Path(scratch),
            stdin=stdin,
        )  # fmt: skip


def _run(
    argv: list[str],
    *,
    env: dict[str, str],
    endpoint: Endpoint,
    timeout: float,
    scratch: Path,
    stdin: Path | None,
) -> Captured:
    with (
        open(scratch / "stdout", "w+b") as out,
        open(scratch / "stderr", "w+b") as err,
        open(stdin or os.devnull, "rb") as given,
    ):
        try:
            process = subprocess.Popen(
                argv, env=env, stdin=given, stdout=out, stderr=err, start_new_session=True
            )
        except OSError as exc:
            raise CaptureError("no-agent", f"cannot run '{argv[0]}': {exc.strerror}") from None
        deadline = time.monotonic() + timeout
        returncode: int | None = None
        while returncode is None and time.monotonic() < deadline:
            try:
                returncode = process.wait(0.1)
            except subprocess.TimeoutExpired:
                continue
        if returncode is None:
            _stop(process)
        text = tail(err) or tail(out)
    recording = endpoint.recording
    found = recording.first_with_tools()
    seen = len(recording.bodies)
    if found is not None:
        body, agent = found
        return Captured(body["tools"], agent, seen, returncode, text)
    if returncode is None:
        message = f"the agent did not finish within {timeout:g} s"
        raise CaptureError("timeout", f"{message}; {_requests(seen)}", text)
    if returncode != 0:
        message = f"the agent exited with status {returncode}; {_requests(seen)}"
        raise CaptureError("agent-failed", message, text)
    raise CaptureError("no-tools", f"the agent finished but {_requests(seen)}", text)


def _requests(seen: int) -> str:
    if seen == 0:
        return (
            "no request reached the capture endpoint (is the agent pointed at it? "
            "ANTHROPIC_BASE_URL is set; use {url} in its arguments or --template config)"
        )
    return f"{seen} request(s) reached the capture endpoint, none with tools"
