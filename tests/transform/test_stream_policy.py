"""A policy (or ``inbound.unmapped``) over a stream without recovery: the pass looks only at
block starts until a call is refused, and what goes out is what looking at every event
gives, and what a message answer gets, whatever the chunking."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.budget import examples
from tests.transform.conftest import write_rules
from tests.transform.test_stream_recovery import REGISTERED, assemble, sse

from bridge_rules.engine import Engine
from bridge_rules.transform.framing import Framed
from bridge_rules.transform.scope import CallScope
from bridge_rules.transform.stream import open_rewriter

MODES = [
    (on_denied, unmapped)
    for on_denied in ("text", "drop", "error")
    for unmapped in ("pass", "error")
]


@pytest.fixture(scope="module")
def engines(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Engine]:
    return {
        (on_denied, unmapped): write_rules(
            tmp_path_factory.mktemp(f"{on_denied}-{unmapped}"),
            f"policy:\n  deny: [Bash]\n  on_denied: {on_denied}\n"
            f"inbound:\n  unmapped: {unmapped}\n",
        )
        for on_denied, unmapped in MODES
    }


def streamed(engine: Engine, stream: bytes, cut: int, skim: bool, framed: bool) -> bytes:
    rw = open_rewriter(CallScope.of(engine.runtime, REGISTERED))
    rw.passes[-1].skim = skim  # type: ignore[attr-defined]
    chunks = [stream[at : at + cut] for at in range(0, len(stream), cut)]
    if framed:  # as the proxy hands them on: whole events, framed once already
        chunks = [Framed(b) for b in _events(stream, cut)]
    return b"".join([rw.feed(c) for c in chunks]) + rw.close()


def _events(stream: bytes, cut: int) -> list[bytes]:
    """The stream's events in runs of ``cut`` events each."""
    events = [e + b"\n\n" for e in stream.split(b"\n\n")[:-1]]
    return [b"".join(events[at : at + cut]) for at in range(0, len(events), cut)]


def _spaced(stream: bytes) -> bytes:
    """The stream with its data written by ``json.dumps``, spaces after ``:`` and ``,``."""
    lines = stream.split(b"\n")
    data = b"data: "
    return b"\n".join(
        data + json.dumps(json.loads(line[6:])).encode() if line.startswith(data) else line
        for line in lines
    )


CALLS = [("Read", {"path": "a"}), ("Bash", {"command": "ls"}), ("Nope", {"a": 1}), ("ls", {})]
BLOCKS = st.one_of(st.sampled_from(["", "prose", "more prose <b>"]), st.sampled_from(CALLS))


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    mode=st.sampled_from(MODES),
    blocks=st.lists(BLOCKS, max_size=5),
    cut=st.integers(1, 90),
    shape=st.sampled_from(["framed", "bytes", "crlf", "spaced"]),
    stop=st.sampled_from(["end_turn", "tool_use"]),
)
def test_looking_at_starts_only_changes_no_byte(
    engines: dict[tuple[str, str], Engine],
    mode: tuple[str, str],
    blocks: list[Any],
    cut: int,
    *,
    shape: str,
    stop: str,
) -> None:
    engine = engines[mode]
    stream = sse(blocks, stop, step=5, eol=b"\r\n" if shape == "crlf" else b"\n")
    if shape == "spaced":
        stream = _spaced(stream)
    framed = shape in {"framed", "spaced"}
    out = streamed(engine, stream, cut, True, framed)
    assert out == streamed(engine, stream, cut, False, framed)
    if b'"type":"error"' in out:  # on_denied: error refused the answer
        assert mode[0] == "error"
        assert ("Bash", {"command": "ls"}) in blocks
        return
    assert b'"name":"bash"' not in out
    assert assemble(out) == engine.inbound(assemble(stream), REGISTERED)


def test_a_denied_call_in_one_run_with_allowed_ones(engines: dict[tuple[str, str], Engine]) -> None:
    """A refused call between passed ones, all in one framed run: the later blocks move up."""
    engine = engines[("drop", "pass")]
    stream = sse(["hi", ("Read", {"path": "a"}), ("Bash", {"command": "ls"}), "bye", ("ls", {})])
    out = streamed(engine, stream, 1000, True, True)
    message = assemble(out)
    assert [b.get("name", b["type"]) for b in message["content"]] == ["text", "read", "text", "ls"]
    assert message == engine.inbound(assemble(stream), REGISTERED)
    assert out == streamed(engine, stream, 1000, False, True)


def test_an_answer_nothing_touches_keeps_its_bytes(engines: dict[tuple[str, str], Engine]) -> None:
    stream = sse(["hi", ("read", {"path": "a"})], "tool_use")
    assert streamed(engines[("text", "pass")], stream, 1000, True, True) == stream


def test_a_block_that_skips_an_index_is_renumbered_as_before(
    engines: dict[tuple[str, str], Engine],
) -> None:
    """An upstream that numbers its blocks 0, 2: the pass moves the second up, as it
    always did, looking only at starts or at every event."""
    stream = sse(["hi", ("Read", {"path": "a"})], "tool_use").replace(b'"index":1', b'"index":2')
    for framed in (True, False):
        out = streamed(engines[("text", "pass")], stream, 1000, True, framed)
        assert b'"index":2' not in out
        assert out == streamed(engines[("text", "pass")], stream, 1000, False, framed)
