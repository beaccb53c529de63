"""grep's context (``-A -B -C``, ``-m``, group separators) and ``tr``, against GNU grep 3
and GNU tr in /usr/bin under LC_ALL=C, byte for byte (issue 35, point 4).

Hypothesis writes the input, the option set and the sets or patterns; every stage the
proxy accepts runs in Python and in bash, and the two answers (standard output after
standard error, as a ``2>&1`` capture shows them) must be the same bytes. What the proxy
refuses must be something the real tool refuses, warns about, or that is listed as not
reproduced: the refusal tests below show that each of those stays in the command.
"""

from __future__ import annotations

import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.bindings.test_extract_differential import (
    ENV,
    PATTERN_PIECES,
    STAGE,
    inputs,
    ours,
    quoted,
    real,
)
from tests.budget import examples

from bridge_rules.repair.extract import stage_for
from bridge_rules.repair.pipeline import strip_extractors

CONTEXT = st.sampled_from(["0", "1", "2", "3", "50"])


@st.composite
def context_grep(draw: st.DrawFn) -> str:
    tool = draw(st.sampled_from(["grep", "grep", "egrep", "fgrep"]))
    words = [tool]
    for letter, long in (("A", "after-context"), ("B", "before-context"), ("C", "context")):
        for _ in range(draw(st.integers(0, 2 if letter == "C" else 1))):
            n = draw(CONTEXT)
            words += draw(
                st.sampled_from([[f"-{letter}", n], [f"-{letter}{n}"], [f"--{long}={n}"]])
            )
    if draw(st.integers(0, 2)) == 0:
        words += draw(st.sampled_from([["-m", "1"], ["-m2"], ["--max-count=3"], ["-m", "0"]]))
    words += draw(
        st.sampled_from(
            [[], [], ["--group-separator=::"], ["--no-group-separator"], ["--group-separator", ""]]
        )
    )
    words += [f"-{f}" for f in draw(st.lists(st.sampled_from("vicnxwa"), unique=True, max_size=3))]
    if tool == "grep":
        words += draw(st.sampled_from([[], ["-E"], ["-F"]]))
    pattern = draw(st.lists(st.sampled_from(PATTERN_PIECES[:20]), min_size=1, max_size=3))
    words += ["-e", "".join(pattern)]
    draw(st.randoms()).shuffle(words[1:])  # GNU getopt permutes: any order is one command
    return quoted(words)


@settings(max_examples=examples(300), deadline=None)
@given(command=context_grep(), data=inputs())
def test_grep_with_context_is_the_real_grep(command: str, data: bytes) -> None:
    if stage_for(command) is None:
        return
    assert ours([command], data) == real(command, data), command


SET_PIECES = [
    "a", "b", "z", "A", "Z", "0", "9", " ", "-", "a-z", "A-Z", "0-9", "b-d", "\\n", "\\t",
    "\\\\", "\\012", "\\101", "\\0", "\\q", "[:lower:]", "[:upper:]", "[:digit:]",
    "[:space:]", "[:alpha:]", "[:punct:]", "[:alnum:]", "[:blank:]", "[:cntrl:]", "[",
    "]", "\xe9", "x", ".", ":",
]  # fmt: skip
REFUSED_PIECES = ["z-a", "\\", "[=a=]", "[a*2]", "[x*]", "[:nope:]", "\\400"]
# One piece in eight is one tr refuses or the proxy does not reproduce.
SET = st.lists(st.sampled_from(SET_PIECES * 2 + REFUSED_PIECES), max_size=4).map("".join)


SET2 = st.lists(
    st.sampled_from([x for x in SET_PIECES if x in ("[:lower:]", "[:upper:]") or "[:" not in x]),
    max_size=4,
).map("".join)


@st.composite
def tr_stage(draw: st.DrawFn) -> str:
    """Mostly what tr takes (the sets its options call for), sometimes not."""
    flags = draw(st.lists(st.sampled_from("cCds"), unique=True, max_size=3))
    d, s = "d" in flags, "s" in flags
    count = 2 if d == s else (1 if d else draw(st.sampled_from([1, 2])))
    if count == 2 and not d and draw(st.integers(0, 4)) == 0:
        flags.append("t")
    if draw(st.integers(0, 9)) == 0:
        count = draw(st.sampled_from([0, 1, 2, 3]))
    long = {"c": "--complement", "C": "-C", "d": "--delete", "s": "--squeeze-repeats"}
    opts = [long.get(f, "--truncate-set1") if draw(st.booleans()) else f"-{f}" for f in flags]
    sets = [draw(SET if i == 0 or d else SET2) for i in range(count)]
    return quoted(["tr", *opts, *sets])


TR_TEXT = st.lists(
    st.sampled_from([*"aAbBzZ09 -\t\n[]:.x\\", "\xe9", "\x00", "\x01", "\x7f"]), max_size=30
).map("".join)


@settings(max_examples=examples(400), deadline=None)
@given(command=tr_stage(), text=TR_TEXT)
def test_tr_is_the_real_tr(command: str, text: str) -> None:
    if stage_for(command) is None:
        return
    data = text.encode("utf-8")
    assert ours([command], data) == real(command, data), command


@settings(max_examples=examples(150), deadline=None)
@given(command=tr_stage(), text=TR_TEXT)
def test_tr_refuses_only_what_it_does_not_reproduce(command: str, text: str) -> None:
    """A refused tr is one GNU tr errors or warns on, or one that uses a listed construct."""
    if stage_for(command) is not None:
        return
    done = subprocess.run(
        ["/bin/bash", "-c", command], input=b"x", capture_output=True, env=ENV, check=False
    )
    unreproduced = ("[=", "*", "-t", "--truncate-set1", "[:")
    listed = any(piece in command for piece in unreproduced)
    assert done.returncode != 0 or done.stderr or listed, command


@settings(max_examples=examples(100), deadline=None)
@given(
    commands=st.lists(st.one_of(context_grep(), tr_stage(), STAGE), min_size=2, max_size=3),
    data=inputs(),
)
def test_chained_with_the_other_stages_is_the_real_pipeline(
    commands: list[str], data: bytes
) -> None:
    if any(stage_for(c) is None for c in commands):
        return
    assert ours(commands, data) == real(" | ".join(commands), data), commands


# What is not reproduced stays in the command the agent runs.
REFUSED = [
    "grep -o -A1 x", "grep -5 x", "grep -A x y", "grep -A -1 x", "grep -m -1 x", "grep -A1",
    "grep -A x -A 1 y", "grep -m 1x -m 2 y", "grep '\ud800'", "tr '\udfff' x",
    "tr a", "tr -d a b", "tr -ds a", "tr abc ''", "tr 'z-a' x", "tr 'a-z' '[:upper:]'",
    "tr '[=a=]' x", "tr a '[x*]'", "tr 'a\\' x", "tr '\\400' x", "tr -c a '[:upper:]'",
    "tr '[:nope:]' x", "tr a b -d", "tr -d", "tr -dt a", "tr -t a",
]  # fmt: skip


@pytest.mark.parametrize("command", REFUSED)
def test_what_is_not_reproduced_stays_in_the_command(command: str) -> None:
    assert stage_for(command) is None
    whole = f"make 2>&1 | {command}"
    assert strip_extractors(whole, {"grep", "tr"}) is None


def test_the_issue_filter_is_stripped_and_applied() -> None:
    """The most frequent filter in pi-tool-guard's own cases: now the proxy applies it."""
    stripped = strip_extractors('npm test 2>&1 | grep -A 50 "FAILED"', {"grep"})
    assert stripped is not None
    assert stripped.cleaned == "npm test 2>&1"
    assert stripped.commands == ('grep -A 50 "FAILED"',)


FUZZED = st.builds(
    "{} {}".format,
    st.sampled_from(["grep", "egrep", "fgrep", "tr"]),
    st.text(st.sampled_from(list("-abcdstACBmnvi0125 :'\"\\[]*^$.=")), max_size=16),
)


@settings(max_examples=examples(300), deadline=None)
@given(command=FUZZED, text=TR_TEXT)
def test_any_command_the_proxy_accepts_is_the_real_tool(command: str, text: str) -> None:
    """Random words after the name: whatever the proxy takes, it answers as the tool does."""
    if stage_for(command) is None:
        return
    data = text.encode("utf-8")
    assert ours([command], data) == real(command, data), command
