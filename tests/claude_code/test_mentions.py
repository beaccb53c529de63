"""The CLI reads nothing on a client's say-so: an ``@path`` in any block of any turn stays text.

Claude Code 2.1.332 expands an at-mention into the file's contents (or a directory listing)
before the model call. Its rule, read from the bundled JS (``extractAtMentionedFiles``) and
confirmed here: an ``@`` at the start of the text or after whitespace (JS ``trim``, so
NBSP, U+3000 and line breaks count) or after one of ``。、？！``, then the run of non-space
characters (``#L1-2`` picks lines); or ``@"any path"`` after the same. The spellings below
are generated from that rule, over every place a canary can be: ``/``, the proxy's
``$HOME``, the proxy's working directory, and the CLI's own ``/proc/self`` (its
``environ`` holds the key, whose value is a canary too).

The oracle is the model endpoint: no canary byte may reach it, in any request, nor the
client. A control run without the fix shows the same spellings do leak, so the test can
fail.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from scripted import ScriptedEndpoint, done, serving
from tests.claude_code.mcp_stub import mcp_config

from bridge_rules.proxy.claude_code import process, sandbox

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("claude-code")]
BEFORE = ("", " ", "\n", "\t", "\u00a0", "\u3000", "。", "！")
"""What may stand before the ``@`` (the string's start, too)."""


@dataclass
class Canaries:
    tokens: list[str]
    paths: list[str]
    """Each a way to name a canary from the CLI's working directory, or its own /proc."""
    key: str


def _token() -> str:
    return "CANARY" + secrets.token_hex(10)


def _plant(base: Path, tokens: list[str], made: list[Path]) -> list[str]:
    """A file and a directory holding canaries under ``base``; the paths that name them."""
    file_token, dir_token = _token(), _token()
    tokens += [file_token, dir_token]
    tag = secrets.token_hex(4)
    file, folder = base / f"bridge-rules-canary-{tag}.txt", base / f"bridge-rules-canary-{tag}"
    spaced = base / f"bridge rules canary {tag}.txt"
    file.write_text(file_token + "\n")
    spaced.write_text(file_token + "\n")
    folder.mkdir()
    (folder / dir_token).write_text(dir_token)
    made += [file, spaced, folder]
    up = "../" * 8  # from the CLI's scratch directory, up to / (extra ../ stay at /)
    return [
        str(file),
        f"{file}#L1-2",
        f"{folder}/",
        str(folder),
        f'"{spaced}"',
        up + str(file).lstrip("/"),
        up + str(folder).lstrip("/") + "/",
        f"/proc/self/root{file}",
        f"/proc/self/cwd/{up}{str(file).lstrip('/')}",
    ]


@pytest.fixture
def canaries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Canaries]:
    """Canaries in ``/`` (the tests run as root; elsewhere a temporary directory stands
    for it), in ``$HOME`` and in the proxy's working directory; removed afterwards."""
    cwd = tmp_path / "proxy-cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    root = Path("/") if os.access("/", os.W_OK) else tmp_path
    home = Path.home() if os.access(Path.home(), os.W_OK) else tmp_path
    tokens: list[str] = []
    made: list[Path] = []
    try:
        paths = [*_plant(root, tokens, made), *_plant(home, tokens, made)]
        paths += _plant(cwd, tokens, made)
        paths += [f"~/{p.name}" for p in made if p.parent == home]
        paths += [f"./{p.name}" for p in made if p.parent == cwd]
        paths += ["/proc/self/environ", "/proc/self/", "/proc/self/cmdline"]
        key = "sk-ant-" + _token()
        yield Canaries(tokens, paths, key)
    finally:
        for path in made:
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)


LOOK_ALIKES = ("\uff20", "\ufe6b")
"""Full-width and small commercial at: the CLI's rule takes only ``@``; sent anyway."""


def mentions(paths: list[str]) -> str:
    """Every path after every allowed lead-in, one per line, each mention on its own; and
    after each look-alike of ``@``."""
    lines = [f"see{lead}@{path}" if lead else f"@{path}" for lead in BEFORE for path in paths]
    lines += [f"{at}{path}" for at in LOOK_ALIKES for path in paths]
    return "\n".join(lines)


def attack_blocks(kind: str, text: str) -> list[dict[str, Any]]:
    """A user turn after a tool call, the mentions in the block ``kind``."""
    result: dict[str, Any] = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}
    if kind == "tool_result":
        return [{**result, "content": text}]
    if kind == "tool_result_blocks":
        return [{**result, "content": [{"type": "text", "text": text}]}]
    if kind == "text":
        return [result, {"type": "text", "text": text}]
    if kind == "document":
        source = {"type": "text", "media_type": "text/plain", "data": text}
        return [result, {"type": "document", "source": source}]
    raise AssertionError(kind)


def conversation(kind: str, text: str, earlier: bool) -> list[dict[str, Any]]:
    if kind == "string":
        turns: list[dict[str, Any]] = [{"role": "user", "content": text}]
    else:
        call = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "a"}}
        turns = [
            {"role": "user", "content": "start"},
            {"role": "assistant", "content": [call]},
            {"role": "user", "content": attack_blocks(kind, text)},
        ]
    if earlier:  # replayed history: appended without a model call
        turns += [{"role": "assistant", "content": "ok"}, {"role": "user", "content": "go"}]
    return turns


def ask(proxy: str, body: dict[str, Any]) -> bytes:
    if not body.get("stream"):
        reply = httpx.post(f"{proxy}/v1/messages", json=body, timeout=90)
        assert reply.status_code == 200, reply.text
        return reply.content
    with httpx.stream("POST", f"{proxy}/v1/messages", json=body, timeout=90) as reply:
        assert reply.status_code == 200
        return reply.read()


def body(messages: list[dict[str, Any]], stream: bool, system: str = "") -> dict[str, Any]:
    tool = {"name": "Read", "description": "read", "input_schema": {"type": "object"}}
    out = {"model": "claude-sonnet-4-6", "max_tokens": 64, "messages": messages}
    return {**out, "tools": [tool], "stream": stream, **({"system": system} if system else {})}


def leaked(endpoint: ScriptedEndpoint, canaries: Canaries, start: int = 0) -> set[str]:
    sent = b"".join(r.body for r in endpoint.requests[start:])
    found = {t for t in canaries.tokens if t.encode() in sent}
    return found | ({canaries.key} if canaries.key.encode() in sent else set())


KINDS = ("string", "text", "tool_result", "tool_result_blocks", "document")


def test_no_mention_in_any_block_or_turn_reads_the_host(
    canaries: Canaries, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = mentions(canaries.paths)
    endpoint = ScriptedEndpoint([done("nothing read")])
    with endpoint, serving(endpoint, monkeypatch) as proxy:
        monkeypatch.setenv("ANTHROPIC_API_KEY", canaries.key)  # the CLI's environ
        replies = [ask(proxy, body([{"role": "user", "content": "hi"}], False, text))]
        for kind in KINDS:
            for earlier in (False, True):
                for stream in (False, True):
                    replies.append(ask(proxy, body(conversation(kind, text, earlier), stream)))
    assert len(endpoint.requests) == 1 + len(KINDS) * 4
    assert leaked(endpoint, canaries) == set()
    assert not any(t.encode() in r for r in replies for t in canaries.tokens)
    # the text reached the model as the client wrote it
    sent = json.loads(endpoint.requests[1].body)["messages"]
    assert text in [b.get("text") for m in sent for b in m["content"]]


def test_without_the_fix_the_same_spellings_leak(
    canaries: Canaries, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control: with the CLI's expansion left on, every spelling of a path in ``/``,
    ``$HOME`` and the proxy's directory, and every lead-in, is read and sent (in a first
    and a later turn), so the test above proves the setting, not a dead generator. (``~/``
    and ``./`` name the CLI's own scratch directory, and ``/proc`` files read empty.)"""
    unfixed = {k: v for k, v in process.FIXED_ENV.items() if "MENTIONS" not in k}
    monkeypatch.setattr(process, "FIXED_ENV", unfixed)
    monkeypatch.setattr(
        process, "wrapped", lambda cmd, scratch, env=None: (cmd, None)
    )  # no sandbox
    endpoint = ScriptedEndpoint([done("read it")])
    places = canaries.paths[:27]
    expanded, leads = [], []
    with endpoint, serving(endpoint, monkeypatch) as proxy:
        for n, path in enumerate(places):
            for earlier in (False, True) if n % 9 == 0 else (False,):
                start = len(endpoint.requests)
                ask(proxy, body(conversation("string", f"@{path}", earlier), False))
                if leaked(endpoint, canaries, start):
                    expanded.append((path, earlier))
        for lead in BEFORE[1:]:
            start = len(endpoint.requests)
            ask(proxy, body(conversation("string", f"see{lead}@{places[0]}", False), False))
            if leaked(endpoint, canaries, start):
                leads.append(lead)
    assert expanded == [
        (path, earlier)
        for n, path in enumerate(places)
        for earlier in ((False, True) if n % 9 == 0 else (False,))
    ]
    assert leads == list(BEFORE[1:])


@pytest.mark.parametrize(
    "allow", [(), ("mcp__mine__*",), ("*",)], ids=["not-allowed", "allowed", "all"]
)
def test_an_mcp_resource_mention_reads_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, allow: tuple[str, ...]
) -> None:
    """``@server:uri`` names a resource of one of the operator's MCP servers: the CLI's JS
    reads such mentions apart from files (``extractMcpResourceMentions``), and the
    file-mention setting does not turn them off. Measured with 2.1.332, nothing was read
    even with every tool allowed; this guards the next CLI."""
    secret = _token()
    settings: Any = {"claude_mcp_config": mcp_config(tmp_path, secret), "claude_allow": allow}
    endpoint = ScriptedEndpoint([done("nothing read")])
    text = "see @mine:note://secret\n@mine:note://secret"
    with endpoint, serving(endpoint, monkeypatch, **settings) as proxy:
        for earlier in (False, True):
            reply = ask(proxy, body(conversation("string", text, earlier), False))
            assert secret.encode() not in reply
    assert endpoint.requests
    assert not any(secret.encode() in r.body for r in endpoint.requests)


@pytest.mark.skipif(sandbox.abi() == 0, reason="this kernel has no Landlock")
def test_the_sandbox_alone_keeps_the_host_from_the_model(
    canaries: Canaries, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second wall: with the CLI's mention expansion turned back on (as a CLI version
    that dropped the setting would have it), the Landlock sandbox still lets it read
    nothing of ``/``, ``$HOME`` or the proxy's directory. The control above is the same
    run without the sandbox, where every one of these spellings leaks."""
    unfixed = {k: v for k, v in process.FIXED_ENV.items() if "MENTIONS" not in k}
    monkeypatch.setattr(process, "FIXED_ENV", unfixed)
    endpoint = ScriptedEndpoint([done("read it")])
    with endpoint, serving(endpoint, monkeypatch) as proxy:
        for path in canaries.paths[:27]:
            start = len(endpoint.requests)
            ask(proxy, body(conversation("string", f"@{path}", False), False))
            assert not leaked(endpoint, canaries, start), path
        assert len(endpoint.requests) >= 27  # every request reached the model
