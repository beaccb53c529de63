"""``grep``, ``egrep`` and ``fgrep`` reading standard input, as GNU grep 3 does under LC_ALL=C.

Options: ``-E -F -G -v -i -c -n -x -w -a -h -s``, ``-e PATTERN`` (repeatable), context
``-A -B -C NUM`` with ``--`` between groups (``--group-separator=SEP``,
``--no-group-separator``), ``-m NUM``, their long forms and ``--color[=auto|never]``
(the output is a pipe: no colour). ``-o`` and ``-NUM`` are not reproduced. Patterns go
through :mod:`bridge_rules.repair.posixre`; a pattern holding a newline is several
patterns, as in grep. Input holding a NUL byte is binary to grep (unless ``-a``): NUL
ends a line, no line is printed and, when one matched, grep says so on standard
error. That is what grep does when it reads the whole input at once, which it does
for the small outputs pi-tool-guard pipes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import re2

from bridge_rules.repair.posixre import NOT_WORD_CLASS, literal, translate
from bridge_rules.repair.stage import Options, Stage, Unsupported, count, getopt, split_lines

_LONG = {
    "extended-regexp": "E",
    "fixed-strings": "F",
    "basic-regexp": "G",
    "invert-match": "v",
    "ignore-case": "i",
    "count": "c",
    "line-number": "n",
    "line-regexp": "x",
    "word-regexp": "w",
    "text": "a",
    "no-filename": "h",
    "no-messages": "s",
    "regexp=": "e",
    "after-context=": "A",
    "before-context=": "B",
    "context=": "C",
    "max-count=": "m",
    "group-separator=": "S",
    "no-group-separator": "N",
}
_NO_COLOUR = frozenset(
    f"--{name}{value}" for name in ("color", "colour") for value in ("", "=auto", "=never")
)
_PRESET = {"grep": "", "egrep": "E", "fgrep": "F"}
_BINARY_LINES = re.compile(rb"[\n\x00]")
BINARY_MATCHES = b"grep: (standard input): binary file matches\n"


def _expression(patterns: list[bytes], mode: str, icase: bool, whole: str) -> str:
    parts = [
        literal(p, icase) if mode == "F" else translate(p, mode == "E", icase)
        for item in patterns
        for p in item.split(b"\n")
    ]
    body = "|".join(f"(?:{part})" for part in parts)
    if whole == "x":
        return f"^(?:{body})$"
    if whole == "w":
        return f"(?:^|{NOT_WORD_CLASS})(?:{body})(?:{NOT_WORD_CLASS}|$)"
    return body


def _compile(expression: str) -> re2._Regexp:
    options = re2.Options()
    options.encoding = re2.Options.Encoding.LATIN1
    options.log_errors = False
    options.never_capture = True
    try:
        return re2.compile(expression.encode("ascii"), options)
    except re2.error as err:  # past RE2's size limits: leave this grep to the agent
        raise Unsupported(str(err)) from err


@dataclass(frozen=True)
class _Output:
    """How selected lines are written: numbers, context and group separators, ``-m``."""

    numbered: bool
    before: int
    after: int
    separator: bytes | None
    """Written between groups that do not touch; None without context options."""
    limit: int | None

    def write(self, lines: list[bytes], selected: list[bool]) -> bytes:
        out: list[bytes] = []
        printed = -1  # the last line written
        left = self.limit
        after_until = -1  # trailing context runs up to this line
        for i, line in enumerate(lines):
            if left == 0 and i > after_until:
                break
            if selected[i] and left != 0:
                start = max(i - self.before, printed + 1)
                if self.separator is not None and 0 <= printed < start - 1:
                    out.append(self.separator)
                for j in range(start, i):
                    out.append(self._line(j, lines[j], b"-"))
                out.append(self._line(i, line, b":"))
                printed, after_until = i, i + self.after
                left = None if left is None else left - 1
            elif i <= after_until:
                out.append(self._line(i, line, b"-"))
                printed = i
        return b"".join(out)

    def _line(self, i: int, line: bytes, mark: bytes) -> bytes:
        return b"%d%s%s\n" % (i + 1, mark, line) if self.numbered else line + b"\n"


def _output(options: Options, numbered: bool) -> _Output:
    """Context as grep settles it: ``-A``/``-B`` over ``-C`` whatever their order, the last
    of each kept; separators whenever any context option is given, even ``-A 0``."""
    last = {k: v for k, v in options.given if k in "ABCm" and v is not None}
    for key, value in options.given:  # grep refuses a bad count even when a later one is good
        if key in "ABCm" and value is not None:
            count(value)
    default = count(last["C"]) if "C" in last else None
    before = count(last["B"]) if "B" in last else default
    after = count(last["A"]) if "A" in last else default
    chosen: str | None = "--"
    for key, value in options.given:  # the last of the two options wins
        if key in "SN":
            chosen = value if key == "S" else None
    context = before is not None or after is not None
    separator = chosen.encode() + b"\n" if context and chosen is not None else None
    limit = count(last["m"]) if "m" in last else None
    return _Output(numbered, before or 0, after or 0, separator, limit)


def grep(name: str, args: list[str]) -> Stage:
    cut = args.index("--") if "--" in args else len(args)
    args = [a for a in args[:cut] if a not in _NO_COLOUR] + args[cut:]
    options = getopt(args, "EFGvicnxwahs", "eABCm", _LONG)
    modes = {k for k, _ in options.given if k in "EFG"} | set(_PRESET[name])
    if len(modes) > 1:
        raise Unsupported("conflicting matchers")
    mode = next(iter(modes), "G")
    patterns = [v.encode() for k, v in options.given if k == "e" and v is not None]
    operands = list(options.operands)
    if not patterns:
        if not operands:
            raise Unsupported("no pattern")
        patterns = [operands.pop(0).encode()]
    if operands:
        raise Unsupported("file operands")
    whole = "x" if options.has("x") else ("w" if options.has("w") else "")
    search = _compile(_expression(patterns, mode, options.has("i"), whole)).search
    invert, counting, text = options.has("v"), options.has("c"), options.has("a")
    output = _output(options, options.has("n"))
    if output.limit == 0 or (
        invert and not whole and not any(b"".join(p.split(b"\n")) for p in patterns)
    ):
        return lambda data: (b"", b"")  # grep stops before reading: not even a count

    def run(data: bytes) -> tuple[bytes, bytes]:
        binary = not text and b"\x00" in data
        if binary:
            lines = _BINARY_LINES.split(data)
            if data.endswith((b"\n", b"\x00")):
                lines.pop()
        else:
            lines = split_lines(data)
        selected = [(search(line) is None) == invert for line in lines]
        hits = sum(selected)
        if output.limit is not None:
            hits = min(hits, output.limit)
        if counting:
            return f"{hits}\n".encode(), b""
        if binary:
            return b"", BINARY_MATCHES if hits else b""
        return output.write(lines, selected), b""

    return run
