"""``proxy.strict``'s quick path over a run of events never passes what reading it event by
event refuses (a differential property over generated runs, damaged or not), and passes
the shape every Anthropic endpoint sends."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.budget import examples

from bridge_rules.proxy.strict import _plainly_read, event_problem
from bridge_rules.transform.framing import framed

TYPES = ["message_start", "content_block_start", "content_block_delta", "ping", "error"]
SCALARS = st.one_of(st.integers(-(2**70), 2**70), st.text(max_size=8), st.booleans(), st.none())
DAMAGE = ["", "NaN", "1e999", '"\\ud800"', '"\xff"', "[1,]", '{"type":"ping"},{"type":"ping"}']


@st.composite
def event(draw: st.DrawFn) -> bytes:
    name = draw(st.sampled_from(TYPES))
    data = {"type": draw(st.sampled_from([name, name, *TYPES])), "v": draw(SCALARS)}
    text = json.dumps(data, ensure_ascii=draw(st.booleans()))
    damage = draw(st.sampled_from(DAMAGE + [None] * 6))
    if damage is not None:
        text = text.replace('"v": ', '"v": ' + damage + ", " if damage else '"v": ', 1)
        if damage.startswith("{"):
            text = damage
    if draw(st.booleans()):
        text = text[:-1] + ', "type": "' + draw(st.sampled_from(TYPES)) + '"}'
    raw = text.encode("utf-8", "surrogatepass").replace("\xff".encode(), b"\xff")  # a raw byte
    return b"event: " + name.encode() + b"\ndata: " + raw + b"\n\n"


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(event(), min_size=1, max_size=6))
def test_the_quick_path_passes_only_what_each_event_passes(events: list[bytes]) -> None:
    run = framed(b"".join(events), False)
    if _plainly_read(run):
        assert all(event_problem(e) is None for e in run.events())


def test_the_common_shape_takes_the_quick_path() -> None:
    run = framed(
        b'event: message_start\ndata: {"type":"message_start","message":{}}\n\n'
        b'event: ping\ndata: {"type": "ping"}\n\n',
        False,
    )
    assert _plainly_read(run)
