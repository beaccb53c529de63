"""Bash trailing-extractor stripping, data-driven from real commands (pi-tool-guard 0.2.1).

Only stages the proxy reproduces exactly are stripped, so every note the strip step
makes is one the result side can apply (the property at the end).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML
from tests.bindings.test_extract_differential import STAGE
from tests.budget import examples

import bridge_rules
from bridge_rules.repair.extract import run_pipeline
from bridge_rules.repair.pipeline import strip_extractors
from bridge_rules.repair.rules import NOTE_KEY

CASES: list[dict[str, Any]] = YAML(typ="safe").load(
    (Path(__file__).parent / "data" / "pipelines.yaml").read_text(encoding="utf-8")
)
# pi-tool-guard's own set: a name the proxy does not reproduce is never stripped, listed or not
EXTRACTORS = "head tail grep egrep fgrep rg sed awk cut sort uniq wc less more column jq yq tr"
GUARD = bridge_rules.load("pi-tool-guard", seal_key=b"a key for the pipeline tests")


def test_the_table_is_the_size_of_pi_tool_guards_own() -> None:
    assert len(CASES) >= 45


@pytest.mark.parametrize("case", CASES, ids=[c["command"] or "<empty>" for c in CASES])
def test_strip(case: dict[str, Any]) -> None:
    result = strip_extractors(case["command"], set(EXTRACTORS.split()))
    if case.get("unchanged"):
        assert result is None
    else:
        assert result is not None
        assert (result.cleaned, result.removed) == (case["cleaned"], case["removed"])


@pytest.mark.parametrize("case", CASES, ids=[c["command"] or "<empty>" for c in CASES])
def test_profile_records_what_it_removed_out_of_band(case: dict[str, Any]) -> None:
    args = {"command": case["command"], "timeout": 5}
    call = GUARD.inbound_call("bash", args)
    if case.get("unchanged"):
        assert call.arguments == args
        assert not call.notes
    else:
        # the agent gets the stripped command and nothing else: no _piToolGuard* keys
        assert call.arguments == {"command": case["cleaned"], "timeout": 5}
        assert call.notes["_piToolGuardOriginalCommand"] == case["command"]
        assert call.notes["_piToolGuardRemoved"] is True
        assert call.notes["_piToolGuardPipeline"] == case["removed"]
        note = call.notes[NOTE_KEY]
        assert (note.original, " | ".join(note.commands)) == (case["command"], case["removed"])


NOT_REPRODUCED = st.sampled_from(
    [
        "sed s/a/b/",
        "awk '{print $1}'",
        "jq .x",
        "tr '[=a=]' x",
        "tr a-z '[:upper:]'",
        "grep -A $N x",
        "grep -5 x",
        "column -t",
        "rg x",
        "grep -P 'x(?=y)'",
        "grep -o x",
        "grep '\\(a\\)\\1'",
        "grep $X",
        "head -n $N",
        "sort -k2",
        "cut -f0",
        "grep x file.txt",
        "tail -f",
    ]
)
FUZZED = st.builds(
    "{} {}".format,
    st.sampled_from(["grep", "head", "tail", "sort", "uniq", "cut", "wc", "tr"]),
    st.text(st.sampled_from(list("-abcdsEFivnABCm0129 ,:'\"\\[]()|*+?{}^$.")), max_size=12),
)


@settings(max_examples=examples(200), deadline=None)
@given(
    stages=st.lists(st.one_of(STAGE, NOT_REPRODUCED, FUZZED), min_size=1, max_size=4),
    output=st.text(max_size=40),
)
def test_every_stripped_pipeline_can_be_applied(stages: list[str], output: str) -> None:
    command = " | ".join(["make 2>&1", *stages])
    call = GUARD.inbound_call("bash", {"command": command})
    note = call.notes.get(NOTE_KEY)
    if note is None:
        return
    assert note.original == command
    cleaned = call.arguments["command"]
    assert command.startswith(cleaned)
    # exactly the stages after the cleaned command, each as written, in order
    assert command[len(cleaned) :].split() == ["|", *" | ".join(note.commands).split()]
    assert all(c in command for c in note.commands)
    assert run_pipeline(note.commands, output) is not None


def test_only_reproduced_stages_are_stripped() -> None:
    note = GUARD.inbound_call("bash", {"command": "make | sed s/a/b/ | head -5"}).notes[NOTE_KEY]
    assert note.commands == ("head -5",)
    assert not GUARD.inbound_call("bash", {"command": "make | head -5 | sed s/a/b/"}).notes
