"""Hostile payloads through every shipped profile: never a traceback, never a hang, nothing lost.

Hypothesis drives the values: integers far past 64 bits and past Python's 4,300
digit limit, deep nesting, lone surrogates, every JSON shape where a request,
message, tool call or SSE stream is expected. The documented promise is that no
payload operation raises and that what no rule touches comes out as it went in;
here "lost" means a large integer the client sent (in a place no rule rewrites)
is missing from, or changed in, the output.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from tests.budget import examples
from tests.hostile.runner import Hang, time_bound
from tests.hostile.tally import TALLY

from bridge_rules.lint.analysis import analyse
from bridge_rules.resources import profile_names
from bridge_rules.runtime import Runtime
from bridge_rules.transform import CallScope, rewrite_message, rewrite_outbound, rewrite_stream

BIG = 2**64 + 1  # 18446744073709551617, the example
# The stream rewriter keeps integers exact once it parses with bridge_rules.jsonio (the
# proxy work of issue 13); until that lands, orjson turns them into floats.
EXACT_STREAMS = importlib.util.find_spec("bridge_rules.jsonio") is not None


def _runtime(profile: str) -> Runtime:
    runtime = analyse(profile).runtime
    assert runtime is not None
    return runtime


RUNTIMES = {name: _runtime(name) for name in profile_names()}
TOOL_NAMES = sorted({n for rt in RUNTIMES.values() for n in rt.known_locals})
WIRE_NAMES = sorted({rt.outbound_name(n) for rt in RUNTIMES.values() for n in rt.known_locals})

huge_ints = st.one_of(
    st.integers(2**53, 2**70),
    st.integers(-(2**200), -(2**63)),
    st.integers(10**300, 10**400),
    st.just(10**4000),  # near int-to-str; past it is tested below (hypothesis cannot repr it)
    st.just(BIG),
)
texts = st.text(st.characters(codec=None, exclude_categories=()), max_size=12)
scalars = st.none() | st.booleans() | st.integers() | huge_ints | st.floats(allow_nan=False) | texts
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=24,
)
names = (
    st.sampled_from(TOOL_NAMES + WIRE_NAMES + ["", "x" * 300, "mcp__a__b"]) | texts | json_values
)
arguments = (
    st.dictionaries(
        st.sampled_from(
            [
                "command",
                "timeout",
                "path",
                "file_path",
                "limit",
                "offset",
                "pattern",
                "edits",
                "todos",
                "content",
                "old_string",
                "head_limit",
                "-A",
                "url",
            ]
        )
        | texts,
        json_values,
        max_size=5,
    )
    | json_values
)
blocks = st.fixed_dictionaries(
    {"type": st.sampled_from(["tool_use", "tool_result", "text", "thinking"]) | texts},
    optional={
        "name": names,
        "input": arguments,
        "id": texts,
        "content": json_values,
        "text": texts,
    },
)
messages = st.lists(
    st.fixed_dictionaries(
        {
            "role": st.sampled_from(["user", "assistant"]) | texts,
            "content": st.lists(blocks) | json_values,
        }
    )
    | json_values,
    max_size=4,
)
requests = st.fixed_dictionaries(
    {"model": st.sampled_from(["claude-sonnet-4-5", "claude-opus-4"]) | json_values},
    optional={
        "tools": st.lists(
            st.fixed_dictionaries({"name": names}, optional={"input_schema": json_values})
            | json_values
        )
        | json_values,
        "tool_choice": json_values,
        "messages": messages,
        "system": json_values,
        "metadata": json_values,
        "x-unknown": json_values,
    },
)


def deep(depth: int) -> Any:
    value: Any = BIG
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


def _big_ints(value: Any) -> Iterator[int]:
    """Integers a float cannot hold exactly, anywhere in ``value`` (no recursion)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, int) and not isinstance(item, bool) and abs(item) > 2**53:
            yield item


def _bounded(run: Callable[[], Any]) -> Any:
    TALLY.tried += 1
    try:
        with time_bound(10):
            return run()
    except Hang:
        TALLY.hangs += 1
        raise
    except Exception:
        TALLY.tracebacks += 1
        raise


def _lost(sent: Any, received: Any) -> int:
    """How many of the large integers in ``sent`` do not come back in ``received``."""
    left = list(_big_ints(received))
    missing = 0
    for number in _big_ints(sent):
        if number in left:
            left.remove(number)
        else:
            missing += 1
    TALLY.lost += missing
    return missing


PROFILES = sorted(RUNTIMES)
HYPOTHESIS = settings(
    max_examples=examples(15), deadline=None, suppress_health_check=list(HealthCheck)
)


@pytest.mark.parametrize("profile", PROFILES)
@HYPOTHESIS
@given(payload=requests | json_values)
def test_requests(profile: str, payload: Any) -> None:
    runtime = RUNTIMES[profile]
    result = _bounded(lambda: rewrite_outbound(runtime, payload, None, {}))
    assert isinstance(result.payload, type(payload))
    # What no rule rewrites is kept: top-level keys other than the ones rules act on.
    if isinstance(payload, dict):
        for key in set(payload) - {"tools", "tool_choice", "messages", "system"}:
            assert result.payload[key] is payload[key]
        kept = {k: v for k, v in payload.items() if k not in ("tools", "messages")}
        assert not _lost(kept, {k: result.payload.get(k) for k in kept})


@pytest.mark.parametrize("profile", PROFILES)
@HYPOTHESIS
@given(
    message=st.fixed_dictionaries({"role": st.just("assistant"), "content": st.lists(blocks)})
    | json_values
)
def test_responses(profile: str, message: Any) -> None:
    runtime = RUNTIMES[profile]
    out = _bounded(lambda: rewrite_message(CallScope(runtime), message))
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        assert out == message  # an unknown shape passes through untouched
        return
    # Blocks that are not tool calls, and calls to tools no rule knows, come back whole.
    for before, after in zip(message["content"], out["content"], strict=True):
        known = before.get("name") in WIRE_NAMES or before.get("name") in TOOL_NAMES
        if before.get("type") != "tool_use" or not known:
            assert not _lost(before, after)


@pytest.mark.parametrize("profile", PROFILES)
@HYPOTHESIS
@given(name=names, args=arguments)
def test_calls(profile: str, name: Any, args: Any) -> None:
    runtime = RUNTIMES[profile]
    if not isinstance(name, str):
        return  # the API boundary refuses it with a TypeError (tests/core/test_api.py)
    from bridge_rules import calls

    _bounded(lambda: calls.inbound_call(runtime, name, args, None))
    _bounded(lambda: calls.outbound_call(runtime, name, args))
    _bounded(lambda: calls.wire_schema(runtime, name, args))


def _event(kind: str, data: Any) -> bytes:
    try:
        body = json.dumps(data)
    except ValueError:
        body = "{}"
    return f"event: {kind}\ndata: {body}\n\n".encode()


events = st.one_of(
    st.builds(
        lambda i, n: _event(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": i,
                "content_block": {"type": "tool_use", "id": "t", "name": n, "input": {}},
            },
        ),
        st.integers(0, 3),
        st.sampled_from(WIRE_NAMES) | texts,
    ),
    st.builds(
        lambda i, p: _event(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": i,
                "delta": {"type": "input_json_delta", "partial_json": p},
            },
        ),
        st.integers(0, 3),
        texts | st.just('{"timeout": ' + str(BIG) + "}"),
    ),
    st.builds(
        lambda i: _event("content_block_stop", {"type": "content_block_stop", "index": i}),
        st.integers(0, 3),
    ),
    st.builds(
        lambda v: _event("message_delta", {"type": "message_delta", "usage": v}), json_values
    ),
    st.just(b"event: ping\ndata: {}\n\n"),
    st.just(b'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error"}}\n\n'),
    st.binary(max_size=40),
    texts.map(lambda t: t.encode("utf-8", "surrogatepass")),
)


def _started_tools(parts: list[bytes]) -> list[Any]:
    """The names of the tool_use blocks the stream's ``content_block_start`` events open."""
    names = []
    for part in parts:
        if not part.startswith(b"event: content_block_start\n"):
            continue
        try:
            block = json.loads(part.split(b"data: ", 1)[1]).get("content_block")
        except (ValueError, IndexError, AttributeError):
            continue
        if isinstance(block, dict):
            names.append(block.get("name"))
    return names


def _rules_remove_timeout(runtime: Runtime, names: list[Any]) -> bool:
    """Whether the rules, on the non-streaming path, take a ``timeout`` argument out of a call
    to one of ``names`` (a binding that keeps only its own fields, say): a large integer that
    leaves by a rule is not lost."""
    for name in names:
        call = {"type": "tool_use", "id": "t", "name": name, "input": {"timeout": BIG}}
        out = rewrite_message(CallScope(runtime), {"role": "assistant", "content": [call]})
        if str(BIG) not in json.dumps(out):
            return True
    return False


@pytest.mark.parametrize("profile", PROFILES)
@HYPOTHESIS
@given(parts=st.lists(events, max_size=10), cuts=st.lists(st.integers(1, 400), max_size=6))
@example(  # found by hypothesis: claude-agent-sdk-pi's Edit binding keeps only its own fields
    parts=[
        _event(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 2,
                "content_block": {"type": "tool_use", "id": "t", "name": "Edit", "input": {}},
            },
        ),
        _event(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 2,
                "delta": {"type": "input_json_delta", "partial_json": f'{{"timeout": {BIG}}}'},
            },
        ),
        _event("message_delta", {"type": "message_delta", "usage": None}),
    ],
    cuts=[],
)
def test_streams(profile: str, parts: list[bytes], cuts: list[int]) -> None:
    runtime = RUNTIMES[profile]
    data = b"".join(parts)
    points = sorted({0, len(data), *(c for c in cuts if c < len(data))})
    chunks = [data[a:b] for a, b in itertools.pairwise(points)]
    out = _bounded(lambda: b"".join(rewrite_stream(CallScope(runtime), chunks)))
    if b"tool_use" not in data:
        assert out == data  # nothing to rewrite: byte for byte
    digits = str(BIG).encode()
    if (
        EXACT_STREAMS
        and data.count(digits) > out.count(digits)
        and not _rules_remove_timeout(runtime, _started_tools(parts))
    ):
        TALLY.lost += 1
        pytest.fail("a large integer in the stream did not come through")


@pytest.mark.parametrize("depth", [100, 1000, 5000])
def test_deep_payloads(depth: int) -> None:
    value = [deep(depth), 10**5000, -(10**4400)]  # past Python's int-to-str limit too
    for runtime in RUNTIMES.values():
        payload = {
            "model": "claude-sonnet-4-5",
            "metadata": value,
            "messages": [{"role": "user", "content": [{"type": "x", "v": value}]}],
        }
        result = _bounded(lambda rt=runtime, p=payload: rewrite_outbound(rt, p, None, {}))
        assert result.payload["metadata"] is value
        message = {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "t",
                    "name": "Bash",
                    "input": {"command": "ls", "timeout": value},
                }
            ],
        }
        out = _bounded(lambda rt=runtime, m=message: rewrite_message(CallScope(rt), m))
        assert not _lost(message, out)
