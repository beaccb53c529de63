"""Property: whatever names a rule file holds, lint answers with located findings, never a crash."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.budget import examples

from bridge_rules.lint.runner import lint_target

names = st.text(alphabet=st.sampled_from("aAzZ_-. _mcp0"), min_size=0, max_size=70)
stage = st.one_of(
    st.fixed_dictionaries(
        {
            "kind": st.sampled_from(["aliases", "capitalize"]),
            "case": st.sampled_from(["exact", "insensitive"]),
            "map": st.dictionaries(names, names, max_size=4),
        }
    ),
    st.fixed_dictionaries({"kind": st.just("canonical"), "names": st.lists(names, max_size=3)}),
    st.fixed_dictionaries({"kind": st.just("passthrough"), "prefix": names}),
    st.fixed_dictionaries({"kind": st.just("prefix"), "value": names}),
)


@settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    stages=st.lists(stage, max_size=5),
    local_tools=st.lists(names, max_size=4),
    pin=st.sampled_from(["claude-code@2.1.330", "claude-code@2.1.0", "claude-code@0.0.1"]),
)
def test_lint_never_crashes(
    tmp_path: Path, stages: list[object], local_tools: list[str], pin: str
) -> None:
    path = tmp_path / "rules.yaml"
    doc = {"bridge-rules": 1, "pin": pin, "local_tools": local_tools, "names": stages}
    path.write_text(json.dumps(doc), encoding="utf-8")  # JSON is YAML
    result = lint_target(path)
    for diag in result.diagnostics:
        assert diag.span.file == str(path)
        assert diag.span.line >= 1
        assert diag.code.startswith("BR")
