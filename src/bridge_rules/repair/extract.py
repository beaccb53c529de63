"""Run a stripped trailing pipeline (``| grep FAIL | head -5``) over a tool's output, in Python.

pi-tool-guard strips trailing extractors from a bash command, runs the rest and
then applies the extractors to the output. The proxy may run on another host
than the agent, so it never executes them: the common extractors are
reimplemented here over text (``head``, ``tail``, ``grep``/``egrep``/``fgrep``/``rg``,
``wc``, ``sort``, ``uniq``, ``cut``; ``less`` and ``more`` pass text on). A
command, an option or a pattern this module does not understand makes the whole
pipeline ``None``: the caller then leaves the output as it was rather than
apply half a pipeline. Regular expressions run on RE2 (linear time).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence

import re2

Extractor = Callable[[list[str], list[str]], list[str] | None]
"""(arguments, lines with their line ends) -> lines, or None when not understood."""


class _Unsupported(Exception):
    pass


def run_pipeline(commands: Sequence[str], text: str) -> str | None:
    """``text`` through every command in order, or None when one is not understood."""
    lines = text.splitlines(keepends=True)
    for command in commands:
        try:
            argv = shlex.split(command)
        except ValueError:
            return None
        if not argv or argv[0] not in EXTRACTORS:
            return None
        try:
            result = EXTRACTORS[argv[0]](argv[1:], lines)
        except (_Unsupported, ValueError, re2.error):
            return None
        if result is None:
            return None
        lines = result
    return "".join(lines)


def _count(value: str) -> int:
    if not re.fullmatch(r"[+-]?\d{1,9}", value):
        raise _Unsupported(value)
    return int(value)


def _head_tail_count(args: list[str]) -> tuple[str, str]:
    """('n' or 'c', the count as written) from head/tail options."""
    unit, count = "n", "10"
    i = 0
    while i < len(args):
        arg = args[i]
        if re.fullmatch(r"-\d+", arg):
            count = arg[1:]
        elif arg in ("-n", "-c", "--lines", "--bytes"):
            if i + 1 >= len(args):
                raise _Unsupported(arg)
            unit, count = ("c" if arg in ("-c", "--bytes") else "n"), args[i + 1]
            i += 1
        elif arg[:2] in ("-n", "-c") and len(arg) > 2:
            unit, count = arg[1], arg[2:]
        elif arg.startswith(("--lines=", "--bytes=")):
            unit, count = ("c" if arg.startswith("--bytes") else "n"), arg.split("=", 1)[1]
        elif arg in ("-q", "-s", "--quiet", "--silent"):
            pass
        else:
            raise _Unsupported(arg)
        i += 1
    return unit, count


def _head(args: list[str], lines: list[str]) -> list[str]:
    unit, count = _head_tail_count(args)
    n = _count(count)
    if unit == "c":
        text = "".join(lines)
        return text[:n].splitlines(keepends=True)
    return lines[:n]  # a negative count: all but the last n, as GNU head does


def _tail(args: list[str], lines: list[str]) -> list[str]:
    unit, count = _head_tail_count(args)
    from_start = count.startswith("+")
    n = abs(_count(count))
    if unit == "c":
        text = "".join(lines)
        out = text[max(n - 1, 0) :] if from_start else (text[-n:] if n else "")
        return out.splitlines(keepends=True)
    if from_start:
        return lines[max(n - 1, 0) :]
    return lines[-n:] if n else []


_GREP_FLAGS = frozenset("ivEFcnwxoHhsP")
_DEFAULT_FLAGS = {"egrep": "E", "rg": "E", "fgrep": "F"}


def _bre_to_ere(pattern: str) -> str:
    """A POSIX basic regular expression in extended (RE2) syntax."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            out.append(nxt if nxt in "|(){}+?" else ch + nxt)
            i += 2
            continue
        out.append("\\" + ch if ch in "|(){}+?" else ch)
        i += 1
    return "".join(out)


def _grep(flavour: str) -> Extractor:
    def run(args: list[str], lines: list[str]) -> list[str]:
        flags = set(_DEFAULT_FLAGS.get(flavour, ""))
        patterns: list[str] = []
        i = 0
        while i < len(args):
            arg = args[i]
            if arg == "-e" and i + 1 < len(args):
                patterns.append(args[i + 1])
                i += 2
                continue
            if arg.startswith("-") and len(arg) > 1 and arg != "--":
                if not set(arg[1:]) <= _GREP_FLAGS or "o" in arg or "P" in arg:
                    raise _Unsupported(arg)
                flags.update(arg[1:])
            elif arg == "--":
                patterns.extend(args[i + 1 : i + 2])
                i += 1
            else:
                patterns.append(arg)
            i += 1
        if len(patterns) != 1:  # a second operand would be a file name
            raise _Unsupported(" ".join(patterns))
        pattern = patterns[0]
        if "F" in flags:
            pattern = re.escape(pattern)
        elif "E" not in flags:
            pattern = _bre_to_ere(pattern)
        if "w" in flags:
            pattern = rf"\b(?:{pattern})\b"
        if "x" in flags:
            pattern = rf"^(?:{pattern})$"
        options = re2.Options()
        options.case_sensitive = "i" not in flags
        options.log_errors = False
        compiled = re2.compile(pattern, options)
        keep = "v" not in flags
        hits = [
            (number, line)
            for number, line in enumerate(lines, 1)
            if (compiled.search(line.rstrip("\r\n")) is not None) == keep
        ]
        if "c" in flags:
            return [f"{len(hits)}\n"]
        if "n" in flags:
            return [f"{number}:{line}" for number, line in hits]
        return [line for _number, line in hits]

    return run


def _wc(args: list[str], lines: list[str]) -> list[str]:
    text = "".join(lines)
    counts = {
        "l": text.count("\n"),
        "w": len(text.split()),
        "c": len(text.encode("utf-8")),
        "m": len(text),
    }
    wanted = "".join(a[1:] for a in args if a.startswith("-")) or "lwc"
    if any(a for a in args if not a.startswith("-")) or not set(wanted) <= set(counts):
        raise _Unsupported(" ".join(args))
    order = [k for k in "lwmc" if k in wanted]
    if len(order) == 1:
        return [f"{counts[order[0]]}\n"]
    return [" ".join(f"{counts[k]:7d}" for k in order) + "\n"]


_NUMBER = re.compile(r"\s*[-+]?(?:\d+\.?\d*|\.\d+)")


def _numeric(line: str) -> float:
    m = _NUMBER.match(line)
    return float(m.group()) if m else 0.0


def _sort(args: list[str], lines: list[str]) -> list[str]:
    flags = "".join(a[1:] for a in args if a.startswith("-"))
    if any(not a.startswith("-") for a in args) or not set(flags) <= set("rnuf"):
        raise _Unsupported(" ".join(args))
    body = [line.rstrip("\n") for line in lines]
    if "n" in flags:
        body.sort(key=lambda s: (_numeric(s), s), reverse="r" in flags)
    else:
        body.sort(key=(lambda s: (s.lower(), s)) if "f" in flags else None, reverse="r" in flags)
    if "u" in flags:
        body = list(dict.fromkeys(body))
    return [line + "\n" for line in body]


def _uniq(args: list[str], lines: list[str]) -> list[str]:
    flags = "".join(a[1:] for a in args if a.startswith("-"))
    if any(not a.startswith("-") for a in args) or not set(flags) <= set("cdui"):
        raise _Unsupported(" ".join(args))
    groups: list[tuple[str, int]] = []
    for raw in lines:
        line = raw.rstrip("\n")
        key = line.lower() if "i" in flags else line
        if groups and (groups[-1][0].lower() if "i" in flags else groups[-1][0]) == key:
            groups[-1] = (groups[-1][0], groups[-1][1] + 1)
        else:
            groups.append((line, 1))
    if "d" in flags:
        groups = [g for g in groups if g[1] > 1]
    if "u" in flags:
        groups = [g for g in groups if g[1] == 1]
    if "c" in flags:
        return [f"{n:7d} {line}\n" for line, n in groups]
    return [line + "\n" for line, _n in groups]


def _fields(spec: str) -> list[tuple[int, int | None]]:
    ranges: list[tuple[int, int | None]] = []
    for part in spec.split(","):
        m = re.fullmatch(r"(\d*)(-?)(\d*)", part)
        if m is None or not (m.group(1) or m.group(3)):
            raise _Unsupported(spec)
        low = int(m.group(1) or 1)
        high = int(m.group(3)) if m.group(3) else (None if m.group(2) else low)
        ranges.append((low, high))
    return ranges


def _cut(args: list[str], lines: list[str]) -> list[str]:
    delim, spec, chars = "\t", None, False
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-d", "-f", "-c") and i + 1 < len(args):
            value = args[i + 1]
            i += 1
        elif arg[:2] in ("-d", "-f", "-c") and len(arg) > 2:
            value = arg[2:]
        else:
            raise _Unsupported(arg)
        if arg.startswith("-d"):
            delim = value
        else:
            spec, chars = value, arg.startswith("-c")
        i += 1
    if spec is None or len(delim) != 1:
        raise _Unsupported(" ".join(args))
    ranges = _fields(spec)
    out = []
    for raw in lines:
        line = raw.rstrip("\n")
        parts = list(line) if chars else line.split(delim)
        if not chars and len(parts) == 1:
            out.append(line + "\n")
            continue
        picked = [
            p for n, p in enumerate(parts, 1) if any(lo <= n <= (hi or n) for lo, hi in ranges)
        ]
        out.append(("" if chars else delim).join(picked) + "\n")
    return out


def _pager(args: list[str], lines: list[str]) -> list[str]:
    return lines


EXTRACTORS: dict[str, Extractor] = {
    "head": _head,
    "tail": _tail,
    "grep": _grep("grep"),
    "egrep": _grep("egrep"),
    "fgrep": _grep("fgrep"),
    "rg": _grep("rg"),
    "wc": _wc,
    "sort": _sort,
    "uniq": _uniq,
    "cut": _cut,
    "less": _pager,
    "more": _pager,
}
"""The extractors applied to output; any other command leaves the output unchanged."""
