"""The indexed first-match gives the same answer as trying every stage in turn.

``Resolver.outbound(name)``, traced or not, uses
:class:`~bridge_rules.stageindex.StageIndex`; the rule as written asks each stage
in order. Both must agree for every shipped profile and for generated stage
sets large enough to take the indexed path.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.budget import examples

from bridge_rules.lint.analysis import analyse
from bridge_rules.names import Tracer
from bridge_rules.resources import profile_names
from bridge_rules.runtime import Runtime
from bridge_rules.stages import CompiledStage, Hit

NAMES = st.text(alphabet="abAB_xX", min_size=1, max_size=4)
STAGE = st.tuples(
    st.sampled_from(["aliases", "passthrough-prefix", "passthrough-names", "canonical"]),
    st.sampled_from(["exact", "insensitive"]),
    st.dictionaries(NAMES, NAMES, min_size=1, max_size=4),
)


def _in_turn(stages: Sequence[CompiledStage], name: str) -> tuple[CompiledStage | None, Hit | None]:
    """The rule as written: each stage in order, the first that matches decides."""
    for stage in stages:
        hit = stage.match(name)
        if hit is not None:
            return stage, hit
    return None, None


def _agree(runtime: Runtime, names: list[str]) -> None:
    resolver = runtime.resolver
    for name in names:
        fast = resolver.outbound(name)
        traced = resolver.outbound(name, Tracer())
        slow = _in_turn(resolver.stages, name)
        assert (fast.stage, fast.hit) == slow, name
        assert (fast.wire, fast.stage, fast.hit) == (traced.wire, traced.stage, traced.hit), name


@pytest.mark.parametrize("profile", profile_names())
def test_shipped_profiles(profile: str) -> None:
    runtime = analyse(profile).runtime
    assert runtime is not None
    names = list(runtime.resolver.known_locals)
    names += [n.lower() for n in names] + [n.upper() for n in names] + ["unknown", "mcp__x__y"]
    _agree(runtime, names)


def _stage_yaml(index: int, kind: str, case: str, table: dict[str, str]) -> list[str]:
    head = [f"  - id: s{index}", f"    case: {case}"]
    if kind == "aliases":
        return [*head, "    kind: aliases", f"    map: {table!r}"]
    if kind == "canonical":
        return [*head, "    kind: canonical", f"    names: {sorted(table)!r}"]
    if kind == "passthrough-prefix":
        return [*head, "    kind: passthrough", f"    prefix: {next(iter(table))!r}"]
    return [*head, "    kind: passthrough", f"    names: {sorted(table.values())!r}"]


@settings(max_examples=examples(40), deadline=None)
@given(stages=st.lists(STAGE, min_size=9, max_size=30), probes=st.lists(NAMES, max_size=30))
def test_generated_stage_sets(
    stages: list[tuple[str, str, dict[str, str]]],
    probes: list[str],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    lines = ["bridge-rules: 1", "names:"]
    for index, (kind, case, table) in enumerate(stages):
        lines += _stage_yaml(index, kind, case, table)
    path: Path = tmp_path_factory.mktemp("idx") / "rules.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    runtime = analyse(path).runtime
    assert runtime is not None
    names = [*probes, *(k for _kind, _case, t in stages for k in t)]
    _agree(runtime, [*names, *(n.swapcase() for n in names)])
