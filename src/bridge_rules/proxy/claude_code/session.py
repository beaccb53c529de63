"""One request through one CLI process: replay the conversation, bridge the answer.

The CLI runs in a fresh scratch directory (its working directory and ``HOME``, both
empty) that is removed afterwards, with session persistence off and no settings files
read. Two gates keep every call the policy does not allow from running: a
``PreToolUse`` hook denies it before the CLI's own permission rules (which let some
read-only built-ins run unasked), and every permission request is denied
(``interrupt``). The CLI makes one model call (``--max-turns 1``); the answer goes to
the client once that call has ended, and the process is stopped then, whatever it was
doing.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import shutil
import tempfile
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from claude_agent_sdk import (
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookContext,
    HookInput,
    HookJSONOutput,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    SdkMcpTool,
    StreamEvent,
    SystemMessage,
    ToolPermissionContext,
    ToolResultBlock,
    UserMessage,
    create_sdk_mcp_server,
)

from bridge_rules.proxy.claude_code.events import Bridge, Event
from bridge_rules.proxy.claude_code.plan import CliPlan, McpTool
from bridge_rules.proxy.claude_code.process import CliOutputError, CliProcess, child_env
from bridge_rules.proxy.claude_code.terms import Bounds, CliFailed, Policy, Run

log = logging.getLogger("bridge_rules.proxy.claude_code")
__all__ = ["Bounds", "CliFailed", "Policy", "Run", "Session"]

DENIED = (
    "Not run here: bridge-rules proposes this call to the client, which runs it and "
    "sends the result in its next request."
)
SETTLE = 2.0
"""Seconds the CLI has, after the model call that proposed tools ended, to end its turn
(the denials make it stop) before it is stopped anyway."""


POLICY_TURNS = 16
"""Model calls one request may make when the policy lets the CLI run tools itself."""


async def _not_run(args: dict[str, Any]) -> dict[str, Any]:
    """An MCP tool's handler: reached only if the CLI ran a tool it was denied."""
    log.error("claude-code: the CLI ran a denied MCP tool; nothing was executed")
    return {"content": [{"type": "text", "text": DENIED}], "is_error": True}


def _server(name: str, tools: list[McpTool]) -> Any:
    sdk_tools = [SdkMcpTool(t.name, t.description, t.schema, _not_run) for t in tools]
    return create_sdk_mcp_server(name, tools=sdk_tools)


class Session:
    def __init__(
        self,
        plan: CliPlan,
        claude_path: str,
        policy: Policy,
        environ: Mapping[str, str],
        idle_timeout: float,
        *,
        max_time: float = Bounds.time,
    ) -> None:
        self.plan = plan
        self._deadline = asyncio.get_running_loop().time() + max_time
        self._max_time = max_time
        self._replaying = True
        self._connected = False
        self._reader: AsyncIterator[Any] | None = None
        self.replayed = 0
        """Lines of :attr:`plan` already written (a prepared spare's history)."""
        self.policy = policy
        self.idle_timeout = idle_timeout
        self.run = Run()
        self.bridge = Bridge(plan.wire_name, policy.runs)
        self._call_ended = asyncio.Event()
        self._scratch = Path(tempfile.mkdtemp(prefix="bridge-rules-claude-"))
        for place in ("home", "tmp", "work"):
            (self._scratch / place).mkdir()
        system_file = self._scratch / "system.txt"
        system_file.write_text(plan.system, encoding="utf-8")
        servers: dict[str, Any] = dict(policy.servers)
        servers.update({name: _server(name, tools) for name, tools in plan.servers.items()})
        options = ClaudeAgentOptions(
            tools=list(plan.builtins),
            system_prompt={"type": "file", "path": str(system_file)},
            model=plan.model,
            mcp_servers=servers,
            strict_mcp_config=True,
            setting_sources=[],
            include_partial_messages=True,
            can_use_tool=self._decide,
            hooks={"PreToolUse": [HookMatcher(matcher=None, hooks=[self._before_tool])]},
            cli_path=claude_path,
            cwd=str(self._scratch / "work"),
            # A client's "/context" is not a command the CLI runs on this host.
            extra_args={"no-session-persistence": None, "disable-slash-commands": None},
            # One model call: a built-in whose input the CLI rejects before asking (an Edit
            # of a file it has not read) must not make it call the model again.
            max_turns=1 if not policy.allow else POLICY_TURNS,
        )
        env = child_env(environ, str(self._scratch), plan.env)
        # Tools or MCP servers the operator allowed may read the host; otherwise the CLI is
        # confined to its scratch directory (sandbox.py).
        confined = None if policy.allow or policy.servers else str(self._scratch)
        self.process = CliProcess(
            replace(options, permission_prompt_tool_name="stdio"),
            env,
            str(self._scratch / "work"),
            sandbox=confined,
        )
        self.client = ClaudeSDKClient(options, transport=self.process)

    def shape(self) -> str:
        """What makes this process the one a request needs, as a hash: its command line,
        environment and working directory (the scratch directory's random name taken
        out), the system prompt its file holds, the in-process MCP tools and the policy.
        Everything but the conversation: two sessions of one shape start the same
        process and write it the same initialisation, so a spare of this shape
        (:mod:`.spares`) is the process this request would start."""
        scratch = str(self._scratch)
        servers = {
            name: [(t.name, t.description, t.schema) for t in tools]
            for name, tools in self.plan.servers.items()
        }
        data = {
            "argv": [a.replace(scratch, "") for a in self.process.argv],
            "env": {k: v.replace(scratch, "") for k, v in self.process.env.items()},
            "cwd": self.process.cwd.replace(scratch, ""),
            "system": self.plan.system,
            "servers": servers,
            "allow": list(self.policy.allow),
        }
        text = json.dumps(data, sort_keys=True, ensure_ascii=False, default=repr)
        return hashlib.sha256(text.encode()).hexdigest()

    async def start(self) -> bool:
        """Start the CLI ahead of its request (a spare); False when it did not start,
        whatever the reason: the request that would take it then starts its own, as
        without spares, and meets the fault itself."""
        try:
            await asyncio.wait_for(self.client.connect(), self.idle_timeout)
        except Exception as exc:
            log.info("claude-code: a spare CLI did not start: %s", exc)
            return False
        self._connected = True
        return True

    def alive(self) -> bool:
        return self._connected and self.process.is_ready()

    def adopt(self, plan: CliPlan, max_time: float) -> None:
        """Answer ``plan`` with this started spare: its shape is ``plan``'s, its
        conversation and bounds are the request's from now on."""
        self.plan = plan
        self.bridge = Bridge(plan.wire_name, self.policy.runs)
        self._deadline = asyncio.get_running_loop().time() + max_time
        self._max_time = max_time

    def discard(self) -> None:
        """Let go of a session that never started (a spare answered its request): its
        scratch directory goes in a thread, off the request's path (removing it took up
        to 15 ms on a busy disk)."""
        loop = asyncio.get_running_loop()
        loop.run_in_executor(None, shutil.rmtree, self._scratch, True)

    async def _before_tool(
        self, data: HookInput, tool_use_id: str | None, context: HookContext
    ) -> HookJSONOutput:
        """The first gate, before the CLI's own permission rules: the read-only built-ins
        it would run unasked in its working directory (Glob, Grep) are denied here too."""
        name = str(data.get("tool_name"))
        if self.policy.runs(name):
            return {}
        self._denied(name)
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": DENIED,
            }
        }

    def _denied(self, name: str) -> None:
        self.run.denied.append(name)
        log.info("claude-code: denied %s (proposed to the client instead)", name)

    async def _decide(
        self, name: str, tool_input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow | PermissionResultDeny:
        if self.policy.runs(name):
            self.run.allowed.append(name)
            return PermissionResultAllow(updated_input=tool_input)
        self._denied(name)
        # Answer once the call's stream is complete, so the denial cuts nothing short.
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._call_ended.wait(), SETTLE)
        return PermissionResultDeny(message=DENIED, interrupt=True)

    async def events(self) -> AsyncGenerator[Event, None]:
        """The client's events, in order; raises :class:`CliFailed` before the first one
        when the CLI cannot answer."""
        try:
            if not self._connected:
                await self._within(self.client.connect(), "start")
            messages = self._messages()
            await self._replay(self.plan.lines[self.replayed :], last=True)
            self._replaying = False
            async for event in self._answer(messages):
                yield event
        finally:
            await self.close()

    def _messages(self) -> AsyncIterator[Any]:
        """The CLI's messages: one reader for the session's whole life (a spare's
        preparation and its request read the same one)."""
        if self._reader is None:
            self._reader = self.client.receive_messages()
        return self._reader

    async def _replay(self, lines: list[dict[str, Any]], last: bool = False) -> None:
        """Append ``lines`` to the CLI's conversation (``last``: the final one starts the
        model call, nothing is awaited after it).

        The CLI appends an assistant line as soon as it reads it, but queues a user line
        and takes it in a turn of its own (user lines queued together become one message),
        so a user line ends each write and the next write waits for that turn's
        ``result``: the assistant line after it goes out with the next user line. The
        lines go straight to the transport, as the SDK's ``query()`` would write them;
        the time a turn takes is the CLI's own (docs/claude-code-upstream.md)."""
        messages = self._messages()
        batch: list[dict[str, Any]] = []
        for n, line in enumerate(lines, 1):
            batch.append(line)
            if line["type"] == "user" or n == len(lines):
                data = "".join(json.dumps(one) + "\n" for one in batch)
                batch = []
                await self._within(self.process.write(data), "take the conversation")
                if line["type"] == "user" and not (last and n == len(lines)):
                    await self._until_result(messages)
        self.replayed += len(lines)

    async def prepare(self, lines: list[dict[str, Any]]) -> bool:
        """Start the CLI and replay ``lines`` (a conversation's history but its last user
        turn) ahead of the request that will end with them; False when either failed."""
        if not await self.start():
            return False
        try:
            await self._replay(lines)
        except CliFailed as exc:
            log.info("claude-code: a spare CLI did not take the history: %s", exc.message)
            return False
        return True

    async def _within(self, step: Any, what: str) -> Any:
        left = self._deadline - asyncio.get_running_loop().time()
        try:
            return await asyncio.wait_for(step, min(self.idle_timeout, max(left, 0)))
        except asyncio.TimeoutError:
            if left <= self.idle_timeout:
                raise self._over_time() from None
            raise CliFailed(
                504, f"the Claude Code CLI did not {what} within {self.idle_timeout:g}s"
            ) from None
        except CliOutputError as exc:
            raise CliFailed(502, str(exc)) from None

    def _over_time(self) -> CliFailed:
        if self._replaying:
            return CliFailed(
                413,
                f"the conversation took longer than {self._max_time:g}s to replay through "
                "the Claude Code CLI (bridge-rules serve --claude-max-time); send a shorter one",
            )
        return CliFailed(
            504,
            f"the Claude Code CLI did not finish within {self._max_time:g}s "
            "(bridge-rules serve --claude-max-time)",
        )

    async def _next(self, messages: AsyncIterator[Any]) -> Any:
        try:
            return await self._within(messages.__anext__(), "answer")
        except StopAsyncIteration:
            note = self.process.stderr_note()
            raise CliFailed(502, f"the Claude Code CLI ended early{note}") from None
        except CliFailed:
            raise
        except Exception as exc:  # the SDK reports a dead transport as its own errors
            note = self.process.stderr_note()
            raise CliFailed(502, f"the Claude Code CLI failed: {exc}{note}") from None

    async def _until_result(self, messages: AsyncIterator[Any]) -> None:
        while not isinstance(msg := await self._next(messages), ResultMessage):
            self._note(msg)

    def _note(self, msg: Any) -> None:
        if isinstance(msg, UserMessage) and isinstance(msg.content, list):
            for block in msg.content:
                name = self.bridge.calls.get(getattr(block, "tool_use_id", ""))
                if isinstance(block, ToolResultBlock) and name is not None:
                    self.run.not_run.append(name)
                    log.info("claude-code: not run %s: %s", name, str(block.content)[:120])
        if isinstance(msg, SystemMessage) and msg.subtype == "init":
            listed = set(msg.data.get("tools") or ())
            self.run.missing = [t for t in self.plan.builtins if t not in listed]
            if self.run.missing:
                log.warning("claude-code: the CLI has no %s", ", ".join(self.run.missing))
            for server in msg.data.get("mcp_servers") or ():
                if isinstance(server, dict) and server.get("status") == "failed":
                    log.warning("claude-code: MCP server %s did not start", server.get("name"))

    async def _answer(self, messages: AsyncIterator[Any]) -> AsyncIterator[Event]:
        """The client's events of the one turn. Once a model call has ended with calls for
        the client, the answer is complete: the CLI gets :data:`SETTLE` seconds to take
        its denials and end, and anything further it does (a tool it ran without asking,
        then another model call) is not part of the answer."""
        deadline: float | None = None  # set once the answer is complete
        loop = asyncio.get_running_loop()
        while True:
            if deadline is None:
                msg = await self._next(messages)
            else:
                try:
                    msg = await asyncio.wait_for(self._next(messages), deadline - loop.time())
                except asyncio.TimeoutError:
                    break
            if isinstance(msg, ResultMessage):
                if msg.is_error and not self.bridge.started:
                    # the endpoint's own "slow down" goes to the client, which backs off
                    status = msg.api_error_status if msg.api_error_status in (429, 529) else 502
                    raise CliFailed(status, f"the Claude Code CLI failed: {_result_text(msg)}")
                break
            if not isinstance(msg, StreamEvent) or msg.parent_tool_use_id is not None:
                self._note(msg)
                continue
            if deadline is not None:
                break  # the CLI moved on by itself: stop it here
            for event in self.bridge.feed(msg.event):
                yield event
            if self.bridge.call_ended and self.bridge.proposed:
                self._call_ended.set()
                deadline = loop.time() + SETTLE
        if not self.bridge.started:
            raise CliFailed(502, "the Claude Code CLI answered without a model response")
        for event in self.bridge.finish():
            yield event

    async def close(self) -> None:
        """Stop the CLI and remove its scratch directory; idempotent."""
        await self.process.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.client.disconnect(), 2)
        shutil.rmtree(self._scratch, ignore_errors=True)


def _result_text(msg: ResultMessage) -> str:
    parts = [msg.result or "", *(msg.errors or [])]
    text = "; ".join(p for p in parts if p) or msg.subtype
    if msg.api_error_status:
        text = f"the model endpoint answered {msg.api_error_status}: {text}"
    return text[:500]
