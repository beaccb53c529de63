"""A CallSealer gives a finished call the id it goes back with, in streams and in messages."""

from __future__ import annotations

from dataclasses import dataclass, field

import orjson
from tests.transform.conftest import adapting
from tests.transform.test_sse import REGISTERED, delta, start, stop

import bridge_rules
from bridge_rules.calls import ToolCall
from bridge_rules.engine import Engine
from bridge_rules.transform import CallScope, rewrite_message, rewrite_stream


@dataclass
class Sealer:
    """Seals calls to one local tool: a new id that says what the call's input was."""

    tool: str
    sealed: list[tuple[str, ToolCall]] = field(default_factory=list)

    def may_seal(self, local_name: str) -> bool:
        return local_name == self.tool

    def seal(self, call_id: str, call: ToolCall) -> str:
        self.sealed.append((call_id, call))
        if call.name != self.tool:
            return call_id
        return f"{call_id}.sealed.{call.arguments['path']}"


def engine() -> Engine:
    return adapting(bridge_rules.load(), "Read", ("file_path", "path"))


def starts(chunks: list[bytes]) -> list[tuple[int, str]]:
    """(output chunk number, id) of every tool_use start, in the order the client gets them."""
    out = []
    for n, chunk in enumerate(chunks):
        for line in chunk.split(b"\n"):
            if line.startswith(b"data: ") and b'"content_block_start"' in line:
                out.append((n, orjson.loads(line[6:])["content_block"]["id"]))
    return out


def test_a_sealed_id_reaches_the_client_and_only_its_start_waits() -> None:
    eng = engine()
    sealer = Sealer("read")
    stream = [
        start(0, "Read"),
        delta(0, '{"file_path": '),
        delta(0, '"a.txt"}'),
        stop(0),
        start(1, "mcp__pi__ls"),
        delta(1, '{"path": "."}'),
        stop(1),
    ]
    out = list(rewrite_stream(CallScope.of(eng.runtime, REGISTERED, sealer), stream))
    # read's start waited for its input, and went out with the sealed id at its stop;
    # ls may not be sealed: its start went out at once, its id as it came.
    assert starts(out) == [(0, "toolu_0.sealed.a.txt"), (1, "toolu_1")]
    assert b'"partial_json":"{\\"path\\":\\"a.txt\\"}"' in out[0]
    assert out[1] == start(1, "mcp__pi__ls").replace(b"mcp__pi__ls", b"ls")
    assert [i for i, _ in sealer.sealed] == ["toolu_0"]


def test_a_sealed_id_reaches_the_client_in_a_message() -> None:
    eng = engine()
    message = {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "toolu_0", "name": "Read", "input": {"file_path": "a"}},
            {"type": "tool_use", "id": "toolu_1", "name": "mcp__pi__ls", "input": {}},
        ],
    }
    out = rewrite_message(CallScope.of(eng.runtime, REGISTERED, Sealer("read")), message)
    assert [b["id"] for b in out["content"]] == ["toolu_0.sealed.a", "toolu_1"]
    assert out["content"][0]["input"] == {"path": "a"}


def test_an_unchanged_id_keeps_the_streams_bytes() -> None:
    eng = engine()

    class Keeps(Sealer):
        def seal(self, call_id: str, call: ToolCall) -> str:
            return call_id

    stream = [start(0, "Read"), delta(0, '{"file_path": "a"}'), stop(0)]
    plain = b"".join(rewrite_stream(CallScope.of(eng.runtime, REGISTERED), stream))
    assert (
        b"".join(rewrite_stream(CallScope.of(eng.runtime, REGISTERED, Keeps("read")), stream))
        == plain
    )


def test_a_held_start_whose_input_never_parses_goes_out_as_it_came() -> None:
    eng = engine()
    stream = [start(0, "Read"), delta(0, '{"file_path": "a')]
    out = b"".join(rewrite_stream(CallScope.of(eng.runtime, REGISTERED, Sealer("read")), stream))
    assert out == start(0, "read") + delta(0, '{"file_path": "a')
