"""Fail closed (issue 34.3), from the client's side: whatever an upstream answers, with a
policy on, no answer reaches the client that the official Python SDK would read as a call
to a denied tool; and every answer the JSON and SSE specifications allow is read, not
refused.

The oracle is the SDK's own reading, not the proxy's: ``anthropic._streaming.SSEDecoder``
for streams, with the SDK's dispatch (skip ``ping`` and unnamed events, stop at ``error``,
``json.loads`` the data), and for JSON ``json.loads`` of the bytes as httpx does (it
takes a BOM, UTF-16 and ``NaN``). Both readers are applied to every answer, whatever its
label or what the request asked for, as a client may. Answers are generated with
hypothesis: spelling (BOM, line ends, ``data:`` with or without its space, comments,
several data lines, ``event:`` left out), damage (a raw 0xff byte, a lone surrogate
escape, ``NaN``, UTF-16, an event named for another type), labels and chunking.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

import pytest
from anthropic._streaming import SSEDecoder
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.budget import examples
from tests.hostile.http_kit import REQUEST, proxies, upstream
from tests.proxy import loopback
from tests.proxy.canned import Canned

SPELLED = ["Bash", "BASH", "bash", "bAsH", "mcp__pi__bash", "MCP__PI__BASH", "Bash_ide",
           "bash_IDE", "MCP__PI__BASH_IDE", "mcp__pi__Bash_ide"]  # fmt: skip
"""Names docs/policy.md says a policy denying ``bash`` denies: any case, under the prefix
pi's rules put on its tools and with the gateway's ``_ide``, each in any case."""
POLICY = {"x-bridge-rules-policy": "no_exec"}
TOOLS = [{"name": n, "input_schema": {"type": "object"}} for n in ("bash", "read")]
LABELS = [
    "application/json",
    "application/json; charset=utf-8",
    "text/event-stream",
    "Text/Event-Stream; charset=utf-8",
    "text/plain",
    "application/octet-stream",
    "text/html",
    None,
]
SETTINGS = settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[Canned, str]]:
    with upstream() as up, proxies() as make:
        yield up, make(up.url)


# ------------------------------------------------------------------ the SDK as oracle
def sdk_sse_calls(body: bytes) -> list[str]:
    """Tool names the SDK's stream reading would build from ``body``."""
    names: list[str] = []
    try:
        for sse in SSEDecoder().iter_bytes(iter([body])):
            if sse.event in ("ping", None):
                continue
            if sse.event == "error":
                break
            if not sse.data:
                continue
            data = json.loads(sse.data)
            block = data.get("content_block") if isinstance(data, dict) else None
            if isinstance(block, dict) and block.get("type") == "tool_use":
                names.append(str(block.get("name")))
    except (UnicodeDecodeError, ValueError, AttributeError):
        pass  # the SDK raises here: nothing after it is run
    return names


def sdk_json_calls(body: bytes) -> list[str]:
    """Tool names the SDK's JSON reading (httpx's ``json.loads`` of the bytes) gives."""
    try:
        message = json.loads(body)
    except (UnicodeDecodeError, ValueError):
        return []
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return []
    return [
        str(b.get("name")) for b in content if isinstance(b, dict) and b.get("type") == "tool_use"
    ]


def sdk_calls(body: bytes) -> list[str]:
    return sdk_sse_calls(body) + sdk_json_calls(body)


def bash_spelled(name: str) -> bool:
    """Whether ``name`` is one of the spellings of ``bash`` the policy denies (the oracle's
    own reading of docs/policy.md, not the proxy's resolver)."""
    folded = name.lower()
    folded = folded.removeprefix("mcp__pi__").removesuffix("_ide")
    return folded == "bash"


# ------------------------------------------------------------------ answers
def message(name: str, command: str = "id") -> dict[str, Any]:
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": name,
                         "input": {"command": command}}],
            "stop_reason": "tool_use", "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1}}  # fmt: skip


def events(name: str, command: str = "id") -> list[dict[str, Any]]:
    start = {**message(name), "content": [], "stop_reason": None}
    args = json.dumps({"command": command})
    return [
        {"type": "message_start", "message": start},
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "tool_use", "id": "toolu_1", "name": name, "input": {}}},
        {"type": "ping"},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "input_json_delta", "partial_json": args}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
         "usage": {"output_tokens": 1}},
        {"type": "message_stop"},
    ]  # fmt: skip


def escaped(text: str, name: str, what: str) -> str:
    """``text`` with JSON's ``\\u`` escapes: ``tool_use`` and the first letter of the tool's
    name (``value``), or every letter of it and the keys that say what a block is and
    what it calls (``all``)."""
    every = "".join(f"\\u{ord(c):04x}" for c in (name if what == "all" else name[0]))
    text = text.replace('"tool_use"', '"\\u0074ool\\u005fuse"').replace(
        json.dumps(name), f'"{every}{name[len(every) // 6 :]}"'
    )
    if what == "all":
        for key in ("type", "name", "content", "content_block"):
            text = text.replace(f'"{key}":', '"\\u' + f'{ord(key[0]):04x}{key[1:]}":')
    return text


@st.composite
def sse_spelled(draw: st.DrawFn, name: str) -> tuple[bytes, bool]:
    """A stream as the SSE specification allows it to be spelled, and whether its tool
    call's event has an ``event:`` line (the SDK skips one without)."""
    eol = draw(st.sampled_from([b"\n", b"\r\n", b"\r"]))
    space = draw(st.sampled_from([b" ", b""]))
    out = [b"\xef\xbb\xbf"] if draw(st.booleans()) else []
    named_call = True
    for i, event in enumerate(events(name)):
        lines: list[bytes] = []
        if draw(st.booleans()):
            lines.append(b": a comment")
        if i not in (0, 6) and draw(st.booleans()):  # no event: line (the data's type names it)
            named_call = named_call and event["type"] != "content_block_start"
        else:
            lines.append(b"event:" + space + event["type"].encode())
        text = json.dumps(event, indent=draw(st.sampled_from([None, 1])))
        if draw(st.booleans()):  # letters written as \u escapes, as JSON allows
            text = escaped(text, name, draw(st.sampled_from(["value", "all"])))
        lines += [b"data:" + space + part.encode() for part in text.split("\n")]
        out.append(eol.join(lines) + eol + eol)
    return b"".join(out), named_call


@st.composite
def sse_body(draw: st.DrawFn, name: str, damage: bool) -> bytes:
    """:func:`sse_spelled`; with ``damage``, one thing no client reads as the proxy would."""
    body, _ = draw(sse_spelled(name))
    return draw(damaged(body, name)) if damage else body


@st.composite
def damaged(draw: st.DrawFn, body: bytes, name: str) -> bytes:
    quoted = json.dumps(name).encode()
    kind = draw(st.sampled_from(["ff", "nan", "utf16", "renamed", "twice"]))
    if kind == "twice":  # the same key twice: every JSON reader here keeps the last
        return body.replace(b'"name": ' + quoted, b'"name": "Read", "name": ' + quoted, 1)
    if kind == "ff":
        return body.replace(quoted, quoted[:-1] + b"\xff" + quoted[-1:], 1)
    if kind == "nan":
        return body.replace(b'"index": 0', b'"index": NaN', 1)
    if kind == "utf16":
        return body.decode("utf-8").encode("utf-16")
    return body.replace(b"event: content_block_start", b"event: ping", 1).replace(
        b"event:content_block_start", b"event:ping", 1
    )


@st.composite
def json_body(draw: st.DrawFn, name: str, damage: bool) -> bytes:
    command = draw(st.sampled_from(["id", "\ud800", "caf\u00e9"]))
    ascii_only = command == "\ud800" or draw(st.booleans())  # a lone surrogate: escaped
    indent = draw(st.sampled_from([None, 2]))
    text = json.dumps(message(name, command), indent=indent, ensure_ascii=ascii_only)
    if draw(st.booleans()):  # letters written as \u escapes, as JSON allows
        text = escaped(text, name, draw(st.sampled_from(["value", "all"])))
    body = text.encode()
    if draw(st.booleans()):
        body = b"\xef\xbb\xbf" + body
    if damage:
        kind = draw(st.sampled_from(["ff", "nan", "utf16", "twice"]))
        quoted = json.dumps(name).encode()
        if kind == "twice":
            body = body.replace(b'"name": ' + quoted, b'"name": "Read", "name": ' + quoted, 1)
        elif kind == "ff":
            body = body.replace(json.dumps(name).encode(), b'"' + name.encode() + b'\xff"', 1)
        elif kind == "nan":
            body = body.replace(b'"input_tokens": 1', b'"input_tokens": NaN', 1)
        else:
            body = text.encode("utf-16")
    return body


def chunked(data: st.DataObject, body: bytes) -> list[bytes]:
    cuts = sorted(set(data.draw(st.lists(st.integers(1, max(1, len(body) - 1)), max_size=6))))
    edges = [0, *cuts, len(body)]
    return [body[a:b] for a, b in itertools.pairwise(edges) if b > a]


def ask(base: str, stream: bool, headers: dict[str, str]) -> bytes:
    payload = {**REQUEST, "tools": TOOLS, "stream": stream}
    return loopback.post(base + "/v1/messages", json=payload, headers=headers, timeout=20).content


# ------------------------------------------------------------------ properties
@SETTINGS
@given(data=st.data(), stream=st.booleans(), label=st.sampled_from(LABELS), damage=st.booleans())
def test_no_answer_gives_the_client_a_denied_call(
    served: tuple[Canned, str], data: st.DataObject, stream: bool, label: str | None, damage: bool
) -> None:
    up, base = served
    as_sse = data.draw(st.booleans())
    name = data.draw(st.sampled_from(SPELLED))
    body = data.draw(sse_body(name, damage) if as_sse else json_body(name, damage))
    up.reply.body = chunked(data, body)
    up.reply.content_type = label
    got = ask(base, stream, POLICY)
    assert not [n for n in sdk_calls(got) if bash_spelled(n)], got[:600]


@SETTINGS
@given(data=st.data())
def test_every_spelling_the_specifications_allow_is_read(
    served: tuple[Canned, str], data: st.DataObject
) -> None:
    """An allowed call, spelled any way SSE or JSON allows, reaches the SDK as the
    agent's own ``read``: the proxy read it (and mapped its name back), refused nothing."""
    up, base = served
    stream = data.draw(st.booleans())
    named = True
    if stream:
        body, named = data.draw(sse_spelled("Read"))
    else:
        body = data.draw(json_body("Read", False))
    up.reply.body = chunked(data, body)
    up.reply.content_type = "text/event-stream" if stream else "application/json"
    got = ask(base, stream, POLICY)
    assert b'"type":"error"' not in got, got[:600]
    calls = sdk_sse_calls(got) if stream else sdk_json_calls(got)
    assert calls == (["read"] if named else []), got[:600]


@pytest.mark.parametrize("label", LABELS)
def test_without_a_policy_an_unreadable_answer_goes_back_as_it_came(
    served: tuple[Canned, str], label: str | None
) -> None:
    up, base = served
    body = json.dumps(message("Bash")).replace('"id"', "NaN", 1).encode()
    up.reply.body, up.reply.content_type = [body], label
    got = ask(base, False, {})
    assert got.startswith(body)  # a stream's label adds today's closing error event, no more
    assert got == body or (label is not None and "event-stream" in label.lower())


def test_an_encoding_the_proxy_cannot_undo_is_a_502_under_a_policy(
    served: tuple[Canned, str],
) -> None:
    up, base = served
    up.reply.body, up.reply.content_type = [b"\x0b\x02\x80not-really-brotli"], "application/json"
    up.reply.headers = [("content-encoding", "zstd")]
    try:
        answer = loopback.post(
            base + "/v1/messages", json={**REQUEST, "tools": TOOLS}, headers=POLICY
        )
        assert answer.status_code == 502
        assert answer.json()["error"]["type"] == "api_error"
        assert "zstd" in answer.json()["error"]["message"]
        unguarded = loopback.post(base + "/v1/messages", json={**REQUEST, "tools": TOOLS})
        assert unguarded.status_code == 200
        assert unguarded.headers["content-encoding"] == "zstd"
    finally:
        up.reply.headers = []


@pytest.mark.parametrize("model", ["gpt-5", "sonnet", "glm-4.6"])
def test_a_closed_gate_fails_closed_too(served: tuple[Canned, str], model: str) -> None:
    """The policy is the request's whether or not the model id opens the rules' gate."""
    up, base = served
    body = json.dumps(message("Bash")).replace('"msg_1"', "NaN", 1).encode()
    up.reply.body, up.reply.content_type = [body], "application/json"
    payload = {**REQUEST, "model": model, "tools": TOOLS}
    answer = loopback.post(base + "/v1/messages", json=payload, headers=POLICY)
    assert answer.status_code == 502, answer.content
    assert answer.json()["type"] == "error"


def test_a_redirect_is_a_502_under_a_policy(served: tuple[Canned, str]) -> None:
    """A client would follow it to an answer the proxy never read."""
    up, base = served
    up.reply.status, up.reply.headers = 307, [("location", "http://127.0.0.1:9/v1/messages")]
    up.reply.body, up.reply.content_type = [json.dumps(message("Bash")).encode()], None
    try:
        payload = {**REQUEST, "tools": TOOLS}
        guarded = loopback.post(base + "/v1/messages", json=payload, headers=POLICY)
        assert guarded.status_code == 502
        assert "redirect" in guarded.json()["error"]["message"]
        assert loopback.post(base + "/v1/messages", json=payload).status_code == 307
    finally:
        up.reply.status, up.reply.headers, up.reply.content_type = 200, [], "application/json"
