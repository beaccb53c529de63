"""The CLI as a child process, with exactly the environment the docs list.

The SDK's own transport merges the proxy's whole environment into the child's and takes
up to ten seconds to stop it. This transport, given to the SDK's client in its place,
builds the same command line (the SDK renders the options), but starts the child with
only :func:`child_env`, in its own process group (so anything it starts goes with it),
and stops it at once: a request that ended, a client that left and a timeout all leave
no process behind. It starts through the launcher of :mod:`.sandbox`, which ends it when
the worker dies, even by SIGKILL.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import os
import shutil
import signal
from collections.abc import AsyncIterator, Mapping
from typing import Any

from claude_agent_sdk import ClaudeAgentOptions
from claude_agent_sdk._internal.transport import Transport
from claude_agent_sdk._internal.transport.subprocess_cli import SubprocessCLITransport

from bridge_rules.proxy.claude_code.sandbox import wrapped

PASSED_ENV = (
    # the CLI's own credentials and provider settings
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "CLAUDE_CODE_OAUTH_TOKEN",
    "CLAUDE_CONFIG_DIR", "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX",
    "ANTHROPIC_BEDROCK_BASE_URL", "ANTHROPIC_VERTEX_BASE_URL", "ANTHROPIC_VERTEX_PROJECT_ID",
    "CLOUD_ML_REGION", "GOOGLE_APPLICATION_CREDENTIALS", "AWS_REGION", "AWS_PROFILE",
    "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK",
    # reaching the network
    "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy",
    "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE",
    # running at all
    "PATH", "LANG", "LC_ALL", "TZ",
)  # fmt: skip
"""Variables copied from the proxy's environment when set; nothing else is."""

FIXED_ENV = {
    "DISABLE_AUTOUPDATER": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "ENABLE_TOOL_SEARCH": "false",  # every tool offered in full, none deferred to a search
    # A failed model call fails the request at once; the client retries as it would against
    # the API (the CLI's own back-off went on for minutes on a 401).
    "CLAUDE_CODE_MAX_RETRIES": "0",
    "CLAUDE_CODE_ENTRYPOINT": "sdk-py",
    # An ``@path`` in the client's text stays text: without this the CLI reads the file (or
    # lists the directory) and sends it to the model, in any turn (docs/claude-code-upstream.md).
    "CLAUDE_CODE_DISABLE_FILE_MENTIONS": "1",
}
STDERR_TAIL = 4096
log = logging.getLogger("bridge_rules.proxy")
LINE_LIMIT = 64 * 1024 * 1024  # one stream-json line (a large tool input or file)


@functools.cache
def _note_unsandboxed(reason: str) -> None:
    """Said once per worker and reason: the CLI runs without the Landlock wall."""
    log.warning("the Claude Code CLI runs without a file sandbox: %s", reason)


class CliOutputError(Exception):
    """The CLI wrote something that is not a stream-json line, or stopped abnormally."""


def child_env(
    environ: Mapping[str, str], scratch: str, request_env: Mapping[str, str]
) -> dict[str, str]:
    """The child's whole environment: :data:`PASSED_ENV` from ``environ``, ``HOME`` and
    ``TMPDIR`` in the request's scratch directory (the CLI leaves files in its temporary
    directory on every run: they go when the scratch directory does), :data:`FIXED_ENV`
    and the request's own settings (sampling)."""
    env = {k: environ[k] for k in PASSED_ENV if k in environ}
    places = {"HOME": f"{scratch}/home", "TMPDIR": f"{scratch}/tmp"}
    return {**env, **places, **FIXED_ENV, **request_env}


async def _no_prompt() -> AsyncIterator[dict[str, Any]]:
    return
    yield {}  # pragma: no cover - makes this an async generator


class CliProcess(Transport):
    def __init__(
        self,
        options: ClaudeAgentOptions,
        env: dict[str, str],
        cwd: str,
        sandbox: str | None = None,
    ) -> None:
        """``sandbox``: the scratch directory the CLI is confined to (:mod:`.sandbox`), or
        None when the operator gave it tools or MCP servers that may read the host. Either
        way the CLI starts through the launcher that ends it with this worker."""
        cmd = SubprocessCLITransport(prompt=_no_prompt(), options=options)._build_command()
        self._cli = shutil.which(cmd[0], path=env.get("PATH"))
        # Always through the launcher, so the CLI dies with this worker (sandbox.py); the
        # wall only where asked for.
        self._cmd, unsandboxed = wrapped([self._cli or cmd[0], *cmd[1:]], sandbox, env)
        if unsandboxed is not None:
            _note_unsandboxed(unsandboxed)
        self._given = cmd[0]
        self._env = env
        self._cwd = cwd
        self.proc: asyncio.subprocess.Process | None = None
        self.stderr_tail = b""
        self._stderr_task: asyncio.Task[None] | None = None
        self._closing = False

    @property
    def argv(self) -> list[str]:
        """The command as started (the launcher's, the CLI's after it)."""
        return list(self._cmd)

    @property
    def env(self) -> dict[str, str]:
        return dict(self._env)

    @property
    def cwd(self) -> str:
        return self._cwd

    async def connect(self) -> None:
        if self._cli is None:  # the launcher would only find out after it started
            if os.path.exists(self._given):
                raise PermissionError(self._given)
            raise FileNotFoundError(self._given)
        self.proc = await asyncio.create_subprocess_exec(
            *self._cmd,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=self._cwd,
            env=self._env,
            start_new_session=True,
            limit=LINE_LIMIT,
        )
        self._stderr_task = asyncio.get_running_loop().create_task(self._drain_stderr())

    async def _drain_stderr(self) -> None:
        assert self.proc is not None
        assert self.proc.stderr is not None
        while chunk := await self.proc.stderr.read(4096):
            self.stderr_tail = (self.stderr_tail + chunk)[-STDERR_TAIL:]

    async def write(self, data: str) -> None:
        if self.proc is None or self.proc.stdin is None or self.proc.returncode is not None:
            raise CliOutputError("the Claude Code CLI is not running")
        self.proc.stdin.write(data.encode())
        await self.proc.stdin.drain()

    def read_messages(self) -> AsyncIterator[dict[str, Any]]:
        return self._read()

    async def _read(self) -> AsyncIterator[dict[str, Any]]:
        assert self.proc is not None
        assert self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError:
                raise CliOutputError(
                    f"the Claude Code CLI printed a line that is not JSON: {line[:120]!r}"
                ) from None
            if not isinstance(message, dict):
                raise CliOutputError("the Claude Code CLI printed JSON that is not an object")
            yield message
        code = await self.proc.wait()
        if self._closing:
            return  # stopped by us: the end of the stream, not a fault
        if self._stderr_task is not None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stderr_task, 1)
        raise CliOutputError(f"the Claude Code CLI exited (status {code}){self.stderr_note()}")

    def stderr_note(self) -> str:
        text = self.stderr_tail.decode("utf-8", "replace").strip()
        return f": {text.splitlines()[-1][:300]}" if text else ""

    def kill(self) -> None:
        """Stop the child now, without waiting; idempotent. The launcher ends the CLI and
        everything it started (sandbox.py); :meth:`close` makes sure of the group."""
        if self.proc is None:
            return
        self._closing = True
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(self.proc.pid, signal.SIGTERM)

    async def close(self) -> None:
        """:meth:`kill`, then reap the child; its group is killed outright if the launcher
        has not ended it within a second."""
        proc = self.proc
        if proc is None:
            return
        self.kill()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.shield(proc.wait()), 1)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)  # the group too, even once the CLI is gone
        with contextlib.suppress(Exception):
            await asyncio.shield(proc.wait())
        if self._stderr_task is not None:
            self._stderr_task.cancel()

    def is_ready(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    async def end_input(self) -> None:
        if self.proc is not None and self.proc.stdin is not None:
            self.proc.stdin.close()
