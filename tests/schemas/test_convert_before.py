"""Issue 36: converting a schema costs less and writes what it wrote before.

The oracle is the output of the sources before the conversion's cuts, committed
(:mod:`tests.schemas.convert_before`): every corpus and pinned schema, for every target,
must come out with the same bytes, the same changes and the same shape.
"""

from __future__ import annotations

import json

from tests.schemas import convert_before

from bridge_rules.schemas import TARGETS, convert, profile

EXPECTED = json.loads((convert_before.HERE / "data" / "convert_before.json").read_text())


def test_every_schema_converts_as_the_old_code_converted_it() -> None:
    seen = {
        f"{label} / {target}": convert_before.outcome(convert(schema, profile(target)))
        for label, schema in convert_before.schemas()
        for target in TARGETS
    }
    assert sorted(seen) == sorted(EXPECTED)
    assert {k: v for k, v in seen.items() if v != EXPECTED[k]} == {}


def test_the_cases_reach_what_the_cuts_touched() -> None:
    """Refused keywords moved (``describe-refused``) and shapes that are not the identity."""
    rules = [rule for v in EXPECTED.values() for rule in v["rules"]]
    assert rules.count("describe-refused") > 50
    assert sum(not v["unchanged"] for v in EXPECTED.values()) > 100
