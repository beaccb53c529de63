"""Every real pi capture (and the bundled response and stream) against its reviewed golden output.

Regenerate with ``.venv/bin/python tests/golden/regen.py`` and review the diff.
"""

from __future__ import annotations

import pytest
from tests.golden.regen import HERE, outputs

OUTPUTS = outputs()


def test_every_capture_has_a_golden_file() -> None:
    captures = {p.name for p in (HERE / "captures").glob("*.json")}
    assert len(captures) == 20
    assert {f"outbound-{c}" for c in captures} <= set(OUTPUTS)
    assert {p.name for p in (HERE / "out").iterdir()} == set(OUTPUTS)


@pytest.mark.parametrize("name", sorted(OUTPUTS))
def test_output_matches_golden(name: str) -> None:
    assert OUTPUTS[name] == (HERE / "out" / name).read_bytes(), (
        f"{name} changed: run `.venv/bin/python tests/golden/regen.py` and review the diff"
    )
