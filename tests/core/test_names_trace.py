"""Traced and untraced resolution are one code path, so they cannot disagree.

``Resolver.outbound`` and ``Resolver.inbound`` without a tracer serve requests
(memoised names, reverse maps of winners only); ``explain`` passes a
:class:`~bridge_rules.names.Tracer` through the same calls. Over every shipped
profile, every lint fixture that compiles, a table written to collide and
generated rule sets, both calls must give the same answer for every name and
registered set, and the trace must end where the answer does.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.budget import examples

from bridge_rules.lint.analysis import analyse
from bridge_rules.names import Resolver, Tracer
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
    """Wire names worth asking about: every reverse entry and local name, in other cases,
    with each strip's suffix, and under each gateway prefix (also written twice)."""
    names = set(resolver.reverse_map(registered).exact) | set(resolver.known_locals)
    names |= set(registered or ())
    names |= {n.upper() for n in names} | {n.lower() for n in names}
    names |= {n + strip.suffix for n in list(names) for strip in resolver.strips}
    if resolver.gateway is not None:
        for strip in resolver.gateway.prefixes:
            names |= {strip.prefix + n for n in list(names)}
        for prefix, _span in resolver.gateway.doubled:
            names |= {prefix + n for n in list(names) if n.startswith(prefix)}
    return names | {"", "mcp__pi__", "mcp__unknown__x", "nothing"}


def agree(resolver: Resolver, registered: tuple[str, ...] | None) -> None:
    for name in [*resolver.known_locals, *(registered or ()), "unknown", "a.b"]:
        untraced = resolver.outbound(name)
        assert resolver.outbound(name) is untraced  # memoised: one dict lookup
        tracer = Tracer()
        traced = resolver.outbound(name, tracer)
        assert traced == untraced
        decided = [step.index for step in tracer.stages if step.matched and step.kind != "guard"]
        assert decided == ([] if untraced.stage is None else [untraced.stage.index])
    winners = resolver.winners(registered)
    with_sources = resolver.reverse_map(registered)
    assert with_sources.sources is not None
    assert (winners.exact, winners.folded) == (with_sources.exact, with_sources.folded)
    for wire in sorted(probes(resolver, registered)):
        tracer = Tracer()
        local = resolver.inbound(wire, registered, tracer)
        assert resolver.inbound(wire, registered) == local, wire
        if local is not None:  # the trace names the answer in the step that gave it
            assert local in {step.result for step in tracer.inbound}, wire


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


# Generated rule sets: few letters, so tables overlap, names collide and differ in case;
# '.' makes some wire names invalid, for the `shorten` guard.
NAME = st.text(alphabet="abAB_.", min_size=1, max_size=3)
CASE = st.sampled_from(["exact", "insensitive"])
REVERSE = st.sampled_from(["registered", "always", "none"])
TABLE = st.fixed_dictionaries(
    {
        "kind": st.sampled_from(["aliases", "capitalize"]),
        "case": CASE,
        "reverse": REVERSE,
        "map": st.dictionaries(NAME, NAME, min_size=1, max_size=4),
    },
    optional={"inverse": st.dictionaries(NAME, NAME, max_size=3)},
)
LISTED = st.fixed_dictionaries(
    {
        "kind": st.sampled_from(["canonical", "passthrough"]),
        "case": CASE,
        "reverse": st.sampled_from(["registered", "none"]),
        "names": st.lists(NAME, min_size=1, max_size=4),
    }
)
PASS_PREFIX = st.fixed_dictionaries({"kind": st.just("passthrough"), "case": CASE, "prefix": NAME})
PREFIX = st.fixed_dictionaries(
    {
        "kind": st.just("prefix"),
        "value": st.sampled_from(["p_", "P_", "mcp__"]),
        "case": CASE,
        "reverse": st.sampled_from(["registered", "always"]),
        "inverse_for": st.sampled_from(["resolved", "unclaimed"]),
    }
)
INBOUND = st.fixed_dictionaries(
    {
        "case": CASE,
        "strip_suffixes": st.lists(
            st.sampled_from(["_x", {"suffix": "_Y", "case": "insensitive"}]), max_size=2
        ),
        "strip_prefixes": st.lists(
            st.sampled_from(["g_", {"prefix": "G_", "case": "insensitive"}]), max_size=2
        ),
        "collapse_doubled_prefixes": st.booleans(),
        "match_registered": st.sampled_from(["none", "exact", "insensitive"]),
    }
)


@st.composite
def rule_files(draw: st.DrawFn) -> str:
    """A rule file of name stages (a prefix stage last, or none), inbound strips and
    gateway undos, and the ``shorten`` guard or not."""
    stages = draw(st.lists(st.one_of(TABLE, LISTED, PASS_PREFIX), min_size=1, max_size=10))
    stages += draw(st.lists(PREFIX, max_size=1))
    lines = ["bridge-rules: 1", "names:"]
    lines += [f"  - {json.dumps({'id': f's{i}', **stage})}" for i, stage in enumerate(stages)]
    lines.append(f"inbound: {json.dumps(draw(INBOUND))}")
    if draw(st.booleans()):
        lines.append("wire_names: {on_invalid: shorten}")
    return "\n".join(lines) + "\n"


@settings(max_examples=examples(60), suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(text=rule_files(), registered=st.lists(NAME, max_size=8), data=st.data())
def test_generated_rule_sets(
    text: str, registered: list[str], data: st.DataObject, tmp_path_factory: pytest.TempPathFactory
) -> None:
    path: Path = tmp_path_factory.mktemp("names") / "rules.yaml"
    path.write_text(text, encoding="utf-8")
    runtime = analyse(path).runtime
    assert runtime is not None
    resolver = runtime.resolver
    if resolver.known_locals:
        registered += data.draw(st.lists(st.sampled_from(resolver.known_locals), max_size=4))
    chosen = tuple(registered)
    if chosen != resolver.known_locals:  # lint asked for that set's collisions
        first = resolver.winners(chosen)
        assert first.sources is None  # the request path builds no record of how names won
    agree(resolver, chosen)
    agree(resolver, None)


def test_the_same_tuple_is_recognised_and_lists_are_not_trusted() -> None:
    resolver = RESOLVERS[0]
    registered = ["read", "bash"]
    first = resolver.winners(tuple(registered))
    assert resolver.winners(tuple(registered)) is first  # cached by the set
    registered.append("ls")
    assert resolver.winners(registered) is not first  # a list is copied, never trusted
    assert resolver.winners(None) is resolver.winners(None)
