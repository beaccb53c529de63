"""Property: a registered tool's wire name maps back to it, unless a collision was reported."""

from __future__ import annotations

import functools

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.budget import examples

import bridge_rules
from bridge_rules.engine import Engine
from bridge_rules.resources import profile_names

KNOWN = [
    "read",
    "write",
    "edit",
    "bash",
    "grep",
    "find",
    "ls",
    "glob",
    "Read",
    "READ",
    "Agent",
    "agent",
    "TodoWrite",
    "web_search_exa",
    "ask_user",
    "mcp__pi__x",
    "mcp__exa__web_search",
    "mcp__custom-tools__x",
    "finish",
    "x_ide",
    "Read_ide",
]
names = st.one_of(
    st.sampled_from(KNOWN),
    st.from_regex(r"[A-Za-z][A-Za-z0-9_-]{0,24}", fullmatch=True),
)


@functools.cache
def engine(profile: str) -> Engine:
    return bridge_rules.load(profile)


@settings(max_examples=examples(300), deadline=None)
@given(
    profile=st.sampled_from(profile_names()),
    registered=st.lists(names, min_size=1, max_size=8, unique=True),
)
def test_outbound_then_inbound_is_identity(profile: str, registered: list[str]) -> None:
    eng = engine(profile)
    collided = {n for c in eng.collisions(registered) for n in c.locals}
    for name in registered:
        if name in collided:
            continue
        wire = eng.outbound_name(name)
        assert eng.inbound_name(wire, registered=registered) == name, (profile, name, wire)


@settings(max_examples=examples(200), deadline=None)
@given(profile=st.sampled_from(profile_names()), name=st.text(max_size=80))
def test_resolution_never_raises(profile: str, name: str) -> None:
    eng = engine(profile)
    wire = eng.outbound_name(name)
    assert isinstance(wire, str)
    eng.inbound_name(name, registered=[name, "read"])
    eng.explain(name).to_dict()
