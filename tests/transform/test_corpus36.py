"""Issue 36, point 6: the same request in gives the same bytes out, after the cost work.

Every body of :mod:`tests.transform.corpus36` (the captured pi and opencode requests and
seeded random ones) goes through every outbound path the work changed: ``Engine.outbound``
twice (the second time its tools come from the memo), the message cache twice (stored,
then served) and the plain bytes path. Each must write the bytes, and report the renames,
tools, gate and refusal, that the sources before the work wrote (``data/corpus36.json``):
the oracle is the old code's output, committed, not the new code.
"""

from __future__ import annotations

from typing import Any

import pytest
from tests.transform import corpus36

import bridge_rules
from bridge_rules import jsonio
from bridge_rules.engine import Engine

EXPECTED = corpus36.expected()
CASES = list(corpus36.cases())


def _engines() -> dict[str, Engine]:
    return {name: bridge_rules.load(spec) for name, spec in corpus36.RULES.items()}


def _paths(eng: Engine, env: dict[str, str], body: bytes) -> list[tuple[str, dict[str, Any]]]:
    """(path, outcome) of the body sent every way the work changed."""
    out = []
    for attempt in ("first", "memo"):
        result = eng.outbound(jsonio.loads(body), env=env)
        seen = corpus36.outcome(result, jsonio.dumps(result.payload))
        out.append((f"Engine.outbound, {attempt}", seen))
    for label, cache in (("cache, stored", True), ("cache, served", True), ("no cache", False)):
        done = eng.outbound_bytes(body, env=env, cache=cache)
        out.append((label, corpus36.outcome(done, done.body, "bytes")))
    return out


def test_the_corpus_covers_what_the_work_touched() -> None:
    """The corpus is the one the expected outputs were made from, and it is not trivial."""
    assert sorted(label for label, *_ in CASES) == sorted(EXPECTED)
    values = list(EXPECTED.values())
    assert sum(bool(v["gate_open"] and v["renames"]) for v in values) > 100
    assert sum(not v["gate_open"] for v in values) > 50
    assert sum(bool(v["rejected"]) for v in values) > 50


@pytest.mark.parametrize("rules", sorted(corpus36.RULES))
def test_every_path_writes_what_the_old_code_wrote(rules: str) -> None:
    eng = _engines()[rules]
    wrong = []
    for label, case_rules, env, body in CASES:
        if case_rules != rules:
            continue
        for path, got in _paths(eng, env, body):
            want = {k: EXPECTED[label][k] for k in got}
            if got != want:
                wrong.append(f"{label} via {path}: {got} != {want}")
    assert not wrong, f"{len(wrong)} differ; first: {wrong[0]}"
