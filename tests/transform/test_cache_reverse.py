"""The request path's reverse map (plain winners, built fast) agrees with the full one.

``Resolver.inbound`` without a trace answers from ``fast_reverse``; ``explain``
and lint build the full :class:`~bridge_rules.names.ReverseMap`. Over every
shipped profile, every lint fixture that compiles and a table written to collide,
both must name the same winner for every wire name, registered set and lookup.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.budget import examples

from bridge_rules.lint.analysis import analyse
from bridge_rules.names import InboundStep, Resolver
from bridge_rules.resources import profile_names

ROOT = Path(__file__).resolve().parent.parent
COLLIDING = """\
bridge-rules: 1
extends: default
names:
  - kind: aliases
    id: clash
    case: insensitive
    reverse: always
    map: {Fetch: mcp__x__fetch, fetch: mcp__x__fetch, get: mcp__x__Fetch, web: mcp__pi__web}
    inverse: {mcp__x__fetch: fetch, MCP__X__GET: get}
"""


def resolvers(tmp: Path) -> list[Resolver]:
    colliding = tmp / "colliding.yaml"
    colliding.write_text(COLLIDING, encoding="utf-8")
    targets: list[str | Path] = [*profile_names(), colliding]
    targets += sorted((ROOT / "lint" / "fixtures").glob("*.yaml"))
    found = []
    for target in targets:
        runtime = analyse(str(target)).runtime
        if runtime is not None:
            found.append(runtime.resolver)
    return found


with tempfile.TemporaryDirectory() as _tmp:
    RESOLVERS = resolvers(Path(_tmp))


def probes(resolver: Resolver, registered: tuple[str, ...] | None) -> set[str]:
    rmap = resolver.reverse_map(registered)
    names = set(rmap.exact) | set(resolver.known_locals) | set(registered or ())
    names |= {n.upper() for n in names} | {n.lower() for n in names}
    names |= {n + strip.suffix for n in list(names) for strip in resolver.strips}
    return names | {"", "mcp__pi__", "mcp__unknown__x", "nothing"}


def agree(resolver: Resolver, registered: tuple[str, ...] | None) -> None:
    rmap = resolver.reverse_map(registered)
    fast = resolver.fast_reverse(registered)
    assert fast.exact == {wire: entry.local for wire, entry in rmap.exact.items()}
    assert fast.folded == {low: entry.local for low, entry in rmap.folded.items()}
    for wire in probes(resolver, registered):
        trace: list[InboundStep] = []
        assert resolver.inbound(wire, registered) == resolver.inbound(wire, registered, trace)


def test_every_known_rule_set_with_every_known_name() -> None:
    assert len(RESOLVERS) > 10
    assert any(r.reverse_map(None).collisions for r in RESOLVERS)
    for resolver in RESOLVERS:
        agree(resolver, None)
        agree(resolver, tuple(resolver.known_locals))
        agree(resolver, ())


@settings(max_examples=examples(150), suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.data())
def test_arbitrary_registered_sets(data: st.DataObject) -> None:
    resolver = data.draw(st.sampled_from(RESOLVERS))
    pool = [*resolver.known_locals, "Fetch", "FETCH", "x_tool", "mcp__pi__ls", "read_ide", "Read"]
    registered = data.draw(st.lists(st.sampled_from(pool), max_size=12))
    agree(resolver, tuple(registered))


def test_the_same_tuple_is_recognised_and_lists_are_not_trusted() -> None:
    resolver = RESOLVERS[0]
    registered = ["read", "bash"]
    first = resolver.fast_reverse(tuple(registered))
    assert resolver.fast_reverse(tuple(registered)) is first  # cached by the set
    registered.append("ls")
    assert resolver.fast_reverse(registered) is not first  # a list is copied, never trusted
    assert resolver.fast_reverse(None) is resolver.fast_reverse(None)
