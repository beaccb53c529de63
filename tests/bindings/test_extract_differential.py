"""Every stage the proxy strips, against the real GNU tool, byte for byte (LC_ALL=C).

Hypothesis writes inputs (empty lines, a last line with or without its newline, tabs,
duplicates, signed and padded numbers, mixed case, a byte >= 0x80, sometimes a NUL)
and option combinations; each stage the proxy accepts runs both in Python and in
/usr/bin, and both answers must be the same bytes on standard output and error.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.budget import examples

from bridge_rules.repair.extract import run_pipeline, stage_for
from bridge_rules.repair.words import shell_words

TOOLS = ["head", "tail", "grep", "egrep", "fgrep", "wc", "sort", "uniq", "cut", "tr"]
ENV = {"LC_ALL": "C", "PATH": "/usr/bin:/bin"}


def test_the_real_tools_are_there() -> None:
    # coreutils and grep are essential packages on Debian: every CI machine has them
    for tool in TOOLS:
        assert shutil.which(tool, path=ENV["PATH"]) is not None, tool


def real(command: str, data: bytes) -> bytes:
    """The real pipeline's output with its standard error, as a ``2>&1`` capture shows it."""
    done = subprocess.run(
        ["/bin/bash", "-c", command],
        input=data,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=ENV,
        cwd=Path(__file__).parent / "data" / "empty",
        timeout=10,
        check=False,
    )
    return done.stdout


def ours(commands: list[str], data: bytes) -> bytes:
    errors = b""
    for command in commands:
        stage = stage_for(command)
        assert stage is not None, command
        data, err = stage(data)
        errors += err
    return errors + data


LINE_CHARS = st.sampled_from([*"aAbBzZ0159 \t-+.:,_x", "\xe9", "\r", "\v", "\f", "\x01"])
NUMBER = st.builds(
    "{}{}{}{}".format,
    st.sampled_from(["", " ", "  ", "\t"]),
    st.sampled_from(["", "-", "+", "--", "\v"]),
    st.sampled_from(["", "0", "1", "2", "10", "007", "33", "1e3"]),
    st.sampled_from(["", ".", ".5", ".50", ".05", "x", " a", ".1.2"]),
)
LINE = st.one_of(st.text(LINE_CHARS, max_size=8), NUMBER, st.sampled_from(["", "a", "A"]))


@st.composite
def inputs(draw: st.DrawFn, nul: bool = True) -> bytes:
    lines = draw(st.lists(LINE, max_size=10))
    text = "\n".join(lines) + ("\n" if lines and draw(st.booleans()) else "")
    data = text.encode("latin-1")
    if nul and data and draw(st.integers(0, 9)) == 0:
        at = draw(st.integers(0, len(data)))
        data = data[:at] + b"\x00" + data[at:]
    return data


def quoted(words: list[str]) -> str:
    return " ".join(shlex.quote(w) for w in words)


COUNT = st.sampled_from(["0", "1", "2", "3", "5", "12"])


@st.composite
def head_tail(draw: st.DrawFn) -> str:
    tool = draw(st.sampled_from(["head", "tail"]))
    n = draw(COUNT)
    sign = draw(st.sampled_from(["", "-", "+"] if tool == "tail" else ["", "-"]))
    form = draw(st.sampled_from(["-n {}", "-n{}", "--lines={}", "-c {}", "--bytes={}", "-{}"]))
    if form == "-{}":
        return f"{tool} -{n}"
    return f"{tool} {form.format(sign + n)}" + draw(st.sampled_from(["", " -q"]))


PATTERN_PIECES = [
    "a", "b", "A", "0", " ", "x", ".", "*", "+", "?", "[ab]", "[^a]", "[a-z]", "[[:digit:]]",
    "[[:space:]]", "[]a]", "^", "$", "\\w", "\\W", "\\s", "\\S", "\\b", "\\B", "(", ")", "|",
    "{1,2}", "{2}", "{,1}", "\\(", "\\)", "\\|", "\\{1\\}", "\\+", "\\?", "\\.", "\\*", "-",
    "\xe9", "[\xe9]", "[^\xe9 ]", "[[:alpha:]_]", "[A-z]", "[0-9a]", "[[:upper:][:punct:]]",
]  # fmt: skip


@st.composite
def grep_stage(draw: st.DrawFn) -> str:
    tool = draw(st.sampled_from(["grep", "grep", "grep", "egrep", "fgrep"]))
    mode = draw(st.sampled_from(["", "", "-E", "-F", "-G"])) if tool == "grep" else ""
    flags = draw(st.lists(st.sampled_from("vicnxwahs"), unique=True, max_size=3))
    patterns = draw(
        st.lists(
            st.lists(st.sampled_from(PATTERN_PIECES), max_size=5).map("".join),
            min_size=1,
            max_size=2,
        )
    )
    words = [tool, *([mode] if mode else []), *(f"-{f}" for f in flags)]
    if len(patterns) == 1 and not patterns[0].startswith("-"):
        words.append(patterns[0])
    else:
        words += [w for p in patterns for w in ("-e", p)]
    return quoted(words)


@st.composite
def text_stage(draw: st.DrawFn) -> str:
    tool = draw(st.sampled_from(["wc", "sort", "sort", "uniq", "cut"]))
    if tool == "cut":
        spec = draw(st.sampled_from(["1", "2", "1,3", "2-", "-2", "1-2,4", "3-3"]))
        unit = draw(st.sampled_from(["-f", "-f", "-c", "-b"]))
        words = ["cut", f"{unit}{spec}"]
        if unit == "-f":
            words += draw(st.sampled_from([[], ["-d:"], ["-d", ","], ["-d", " "]]))
            words += draw(st.sampled_from([[], ["-s"], ["--output-delimiter=|"]]))
        return quoted(words)
    letters = {"wc": "lwc", "sort": "nruf", "uniq": "cdui"}[tool]
    flags = draw(st.lists(st.sampled_from(letters), unique=True, max_size=3))
    joined = draw(st.booleans())
    opts = ["-" + "".join(flags)] if joined and flags else [f"-{f}" for f in flags]
    return quoted([tool, *opts])


STAGE = st.one_of(head_tail(), grep_stage(), text_stage())


@settings(max_examples=examples(150), deadline=None)
@given(command=STAGE, data=inputs())
def test_a_stage_is_the_real_tool(command: str, data: bytes) -> None:
    if stage_for(command) is None:
        return  # not reproduced: the strip step leaves it in the agent's command
    assert shell_words(command) == shlex.split(command)
    assert ours([command], data) == real(command, data), command


@settings(max_examples=examples(60), deadline=None)
@given(commands=st.lists(STAGE, min_size=2, max_size=3), data=inputs())
def test_chained_stages_are_the_real_pipeline(commands: list[str], data: bytes) -> None:
    if any(stage_for(c) is None for c in commands):
        return
    assert ours(commands, data) == real(" | ".join(commands), data), commands


@settings(max_examples=examples(50), deadline=None)
@given(commands=st.lists(STAGE, min_size=1, max_size=3), data=inputs(nul=False))
def test_run_pipeline_shows_the_real_text(commands: list[str], data: bytes) -> None:
    if any(stage_for(c) is None for c in commands):
        return
    text = data.decode("latin-1")
    expected = real(" | ".join(commands), text.encode()).decode("utf-8", "replace")
    assert run_pipeline(commands, text) == expected


# Commands a model writes, each reproduced (and so stripped); checked on a fixed input.
ACCEPTED = [
    "head -5", "head -n 2", "head -n -1", "head -c 3", "tail -20", "tail -n +2", "tail -c 4",
    "grep FAIL", "grep -v ok", "grep -i fail", "grep -c x", "grep -n b", "grep -E 'error|warn'",
    "grep -vE '^(ok|skip)'", "grep -iE 'fail(ed)?'", "egrep 'x|y'", "fgrep 'a.c'", "grep -F '[x'",
    "grep -e a -e b", "grep -x abc", "grep -w is", "grep 'a\\|b'", "grep '[[:digit:]]\\{2\\}'",
    "grep -- -x", "grep --color=never x", "wc -l", "wc", "wc -w", "wc -lc", "sort", "sort -rn",
    "sort -n -r -u", "sort -f", "uniq -c", "uniq -d", "cut -d: -f1", "cut -d , -f 2-",
    "cut -c1-2", "cut -f2,4 -s", "head --lines=3", "tail --bytes=+3", "tail -n -2 -q",
    "grep --invert-match --ignore-case --regexp=ok", "grep --count --fixed-strings .",
    "grep --line-number --extended-regexp 'a|b'", "grep --word-regexp --line-regexp is",
    "wc --lines --words", "sort --numeric-sort --reverse --unique", "sort --ignore-case",
    "uniq --count --repeated", "uniq --unique --ignore-case", "cut --delimiter=: --fields=1",
    "cut --only-delimited -d' ' -f2 --output-delimiter=_", "cut --bytes=2-",
    "grep -A 50 FAILED", "grep -B 2 -A 5 Error", "grep -C 3 -n FAIL", "grep -A1 -m1 FAIL",
    "grep -n -B1 --group-separator=== ok", "grep --no-group-separator -A1 ok",
    "grep -c -A5 FAIL", "grep -v -C1 ok", "grep -iE -A2 'fail|error'", "egrep -A1 'ok|FAIL'",
    "fgrep -B1 -m 2 ok", "grep --after-context=2 --before-context=1 FAIL", "grep -A0 ok",
    "tr a-z A-Z", "tr '[:lower:]' '[:upper:]'", "tr -d '\\r'", "tr -d '[:digit:]'",
    "tr -s ' '", "tr -cs '[:alnum:]' '\\n'", "tr '\\n' ' '", "tr -cd '[:print:]\\n'",
    "tr -t abc xy", "tr ':' '\\t'", "tr -s '[:space:]' ' '", "tr -ds 0-9 ' '",
]  # fmt: skip
FIXED = (
    b"root:x:0\nFAIL a,b\nok 1\n\tab  12\nabc\nit is\n10\n-3\nok 1\nFailed x\n-x\n2\n"
    b"ok 1\nFAIL a: 12\n  x\r\nok 2\n\nError!  here\nok 3\nFAILED b\n\ttail\nok 4\n"
)


@pytest.mark.parametrize("command", ACCEPTED)
def test_common_commands_are_reproduced(command: str) -> None:
    assert stage_for(command) is not None
    assert ours([command], FIXED) == real(command, FIXED)
