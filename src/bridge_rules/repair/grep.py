"""``grep``, ``egrep`` and ``fgrep`` reading standard input, as GNU grep 3 does under LC_ALL=C.

Options: ``-E -F -G -v -i -c -n -x -w -a -h -s``, ``-e PATTERN`` (repeatable), their
long forms and ``--color[=auto|never]`` (the output is a pipe: no colour). Patterns go
through :mod:`bridge_rules.repair.posixre`; a pattern holding a newline is several
patterns, as in grep. Input holding a NUL byte is binary to grep (unless ``-a``): NUL
ends a line, no line is printed and, when one matched, grep says so on standard
error. That is what grep does when it reads the whole input at once, which it does
for the small outputs pi-tool-guard pipes.
"""

from __future__ import annotations

import re

import re2

from bridge_rules.repair.posixre import NOT_WORD_CLASS, literal, translate
from bridge_rules.repair.stage import Stage, Unsupported, getopt, split_lines

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


def grep(name: str, args: list[str]) -> Stage:
    cut = args.index("--") if "--" in args else len(args)
    args = [a for a in args[:cut] if a not in _NO_COLOUR] + args[cut:]
    options = getopt(args, "EFGvicnxwahs", "e", _LONG)
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
    invert, counting = options.has("v"), options.has("c")
    numbered, text = options.has("n"), options.has("a")
    if invert and not whole and not any(b"".join(p.split(b"\n")) for p in patterns):
        return lambda data: (b"", b"")  # grep -v '' stops before reading: not even a count

    def run(data: bytes) -> tuple[bytes, bytes]:
        binary = not text and b"\x00" in data
        if binary:
            lines = _BINARY_LINES.split(data)
            if data.endswith((b"\n", b"\x00")):
                lines.pop()
        else:
            lines = split_lines(data)
        hits = [(n, line) for n, line in enumerate(lines, 1) if (search(line) is None) == invert]
        if counting:
            return f"{len(hits)}\n".encode(), b""
        if binary:
            return b"", BINARY_MATCHES if hits else b""
        if numbered:
            return b"".join(b"%d:%s\n" % (n, line) for n, line in hits), b""
        return b"".join(line + b"\n" for _n, line in hits), b""

    return run
