"""``Engine.retargeted``: a ``serve`` route's ``target:`` through the facade. The oracle is the
rule file itself: retargeting rules at run time must send exactly what the same rules
written with that ``schemas: {target: ...}`` send."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from tests.schemas.test_engine import engine, request

from bridge_rules.engine import SCHEMA_TARGETS


@pytest.mark.parametrize("target", [*SCHEMA_TARGETS, "none"])
def test_a_retargeted_engine_sends_what_the_target_written_in_the_file_sends(
    tmp_path: Path, target: str
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    written = engine(tmp_path / "a", f"schemas: {{target: {target}}}\n")
    default = engine(tmp_path / "b", "name: default\n")
    body = orjson.dumps(request())
    assert default.retargeted(target).outbound_bytes(body, env={}).body == (
        written.outbound_bytes(body, env={}).body
    )


def test_retargeting_keeps_the_bindings_added_at_run_time(tmp_path: Path) -> None:
    base = engine(tmp_path, "name: base\n")
    added = base.with_bindings([{"local": "ask", "wire": "AskUserQuestion"}], origin="ext")
    assert added.retargeted("gemini").binding_origins == ["ext"]
    assert added.narrowed(()).binding_origins == ["ext"]
