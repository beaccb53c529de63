"""A response's head held until its body is written (``proxy.coalesce``): the same bytes
in the same order reach the socket, only in fewer writes; a head alone goes out at the
end of the loop turn, and before a close."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.budget import examples

from bridge_rules.proxy.coalesce import JOIN_LIMIT, HeldHead


class Recorder:
    """A transport that keeps what it is given, write by write."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        assert not self.closed
        self.writes.append(bytes(data))

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str) -> Any:
        return ("127.0.0.1", 1) if name == "peername" else None


Step = tuple[str, bytes]
steps = st.lists(
    st.one_of(
        st.tuples(st.just("write"), st.binary(min_size=0, max_size=64)),
        st.tuples(st.just("write"), st.just(b"x" * (JOIN_LIMIT + 1))),
        st.tuples(st.just("writelines"), st.binary(min_size=0, max_size=64)),
        st.tuples(st.just("turn"), st.just(b"")),
    ),
    max_size=12,
)


async def _play(plan: list[Step], close: bool) -> tuple[Recorder, list[bytes]]:
    real = Recorder()
    held = HeldHead(real, asyncio.get_running_loop())  # type: ignore[arg-type]
    written: list[bytes] = []
    for kind, data in plan:
        if kind == "write":
            held.write(data)
            written.append(data)
        elif kind == "writelines":  # asyncio's other way to write, in two pieces
            held.writelines([data[:1], data[1:]])
            written.append(data)
        else:
            await asyncio.sleep(0)  # the loop turns
    if close:
        held.close()
    else:
        await asyncio.sleep(0)
    return real, written


@settings(max_examples=examples(300), deadline=None)
@given(steps, st.booleans())
def test_the_socket_gets_every_byte_in_order_and_nothing_stays_held(
    plan: list[Step], close: bool
) -> None:
    real, written = asyncio.run(_play(plan, close))
    assert b"".join(real.writes) == b"".join(written)  # the oracle: what uvicorn wrote
    assert real.closed == close
    assert len(real.writes) <= len(written) + 1


def test_a_head_and_its_body_in_one_turn_are_one_write() -> None:
    real, _ = asyncio.run(_play([("write", b"HTTP/1.1 200 OK\r\n\r\n"), ("write", b"{}")], False))
    assert real.writes == [b"HTTP/1.1 200 OK\r\n\r\n{}"]


def test_a_head_whose_body_waits_goes_out_when_the_turn_ends() -> None:
    async def run() -> list[bytes]:
        real = Recorder()
        held = HeldHead(real, asyncio.get_running_loop())  # type: ignore[arg-type]
        held.write(b"head")
        assert real.writes == []
        await asyncio.sleep(0)
        assert real.writes == [b"head"]  # a stream's client sees the head at once
        held.write(b"chunk")
        return real.writes

    assert asyncio.run(run()) == [b"head", b"chunk"]


def test_a_large_body_is_not_copied_onto_the_head() -> None:
    body = b"y" * (JOIN_LIMIT + 1)
    real, _ = asyncio.run(_play([("write", b"head"), ("write", body)], False))
    assert real.writes == [b"head", body]
    assert real.writes[1] is not None


def test_anything_else_is_the_real_transports() -> None:
    async def run() -> Any:
        return HeldHead(Recorder(), asyncio.get_running_loop()).get_extra_info("peername")  # type: ignore[arg-type]

    assert asyncio.run(run()) == ("127.0.0.1", 1)


def test_a_head_held_when_the_peer_goes_is_dropped_quietly() -> None:
    async def run() -> list[bytes]:
        real = Recorder()
        held = HeldHead(real, asyncio.get_running_loop())  # type: ignore[arg-type]
        held.write(b"head")
        real.close()  # the loop saw the connection reset before the turn ended
        await asyncio.sleep(0)
        return real.writes

    assert asyncio.run(run()) == []
