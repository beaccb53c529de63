"""``head``, ``tail``, ``wc``, ``sort``, ``uniq``, ``cut``: GNU coreutils under LC_ALL=C.

Each builder takes the words after the command name and returns a :data:`Stage`, or
raises :class:`Unsupported` for anything outside the options listed here (operands
are files, so they are refused too). Where a tool depends on the locale, the C locale
is what is reproduced: bytes, byte order, ASCII case and ASCII printable characters.
"""

from __future__ import annotations

import re
from decimal import Decimal

from bridge_rules.repair.stage import (
    Stage,
    Unsupported,
    count,
    flags_only,
    getopt,
    join_lines,
    no_operands,
    split_lines,
)

_OBSOLETE_COUNT = re.compile(r"-\d+")


def _chunks(data: bytes) -> list[bytes]:
    """Lines with their newline; the last may lack one."""
    parts = data.split(b"\n")
    out = [part + b"\n" for part in parts[:-1]]
    return [*out, parts[-1]] if parts[-1] else out


def _head_tail_options(args: list[str]) -> tuple[str, str]:
    """('n' or 'c', the last count given as written); ``-N`` first is ``-n N``."""
    if args and _OBSOLETE_COUNT.fullmatch(args[0]):
        args = ["-n", args[0][1:], *args[1:]]
    long = {"lines=": "n", "bytes=": "c", "quiet": "q", "silent": "q"}
    options = getopt(args, "q", "nc", long)
    no_operands(options)
    unit, value = "n", "10"
    for key, given in options.given:
        if key in "nc" and given is not None:
            unit, value = key, given
    return unit, value


def head(args: list[str]) -> Stage:
    unit, value = _head_tail_options(args)
    all_but = value.startswith("-")
    n = count(value[1:] if all_but else value)

    def run(data: bytes) -> tuple[bytes, bytes]:
        items: bytes | list[bytes] = data if unit == "c" else _chunks(data)
        kept = items[: max(len(items) - n, 0)] if all_but else items[:n]
        return (kept if isinstance(kept, bytes) else b"".join(kept)), b""

    return run


def tail(args: list[str]) -> Stage:
    unit, value = _head_tail_options(args)
    from_start = value.startswith("+")
    n = count(value[1:] if value[:1] in "+-" and value else value)

    def run(data: bytes) -> tuple[bytes, bytes]:
        items: bytes | list[bytes] = data if unit == "c" else _chunks(data)
        kept = items[max(n - 1, 0) :] if from_start else items[max(len(items) - n, 0) :]
        return (kept if isinstance(kept, bytes) else b"".join(kept)), b""

    return run


_WORD_SEPARATORS = frozenset(b" \t\n\v\f\r")


def _words(data: bytes) -> int:
    """Words as wc counts them in the C locale: runs that hold a printable ASCII character.

    A byte that is neither a separator nor printable (a control byte, any byte >= 0x80)
    neither starts nor ends a word.
    """
    words, in_word = 0, False
    for byte in data:
        if byte in _WORD_SEPARATORS:
            words += in_word
            in_word = False
        elif 0x20 < byte < 0x7F:
            in_word = True
    return words + in_word


def wc(args: list[str]) -> Stage:
    wanted = flags_only(args, "lwc", {"lines": "l", "words": "w", "bytes": "c"}) or set("lwc")
    order = [key for key in "lwc" if key in wanted]

    def run(data: bytes) -> tuple[bytes, bytes]:
        counts = {"l": data.count(b"\n"), "w": _words(data), "c": len(data)}
        if len(order) == 1:
            return f"{counts[order[0]]}\n".encode(), b""
        return (" ".join(f"{counts[k]:7d}" for k in order) + "\n").encode(), b""

    return run


_NUMBER = re.compile(rb"[ \t]*(-?)(\d*)(?:\.(\d*))?")


def _numeric(line: bytes) -> Decimal:
    """sort -n's number in the C locale: blanks, '-', digits, '.', digits; else 0."""
    m = _NUMBER.match(line)
    assert m is not None  # every part of the pattern is optional
    sign, whole, fraction = m.groups()
    if not whole and not fraction:
        return Decimal(0)
    return Decimal(f"{sign.decode()}{whole.decode() or 0}.{(fraction or b'0').decode()}")


def sort(args: list[str]) -> Stage:
    given = flags_only(
        args, "nruf", {"numeric-sort": "n", "reverse": "r", "unique": "u", "ignore-case": "f"}
    )
    numeric, reverse, unique, fold = ("n" in given, "r" in given, "u" in given, "f" in given)

    def key(line: bytes) -> Decimal | bytes:
        if numeric:
            return _numeric(line)
        return line.upper() if fold else line

    def run(data: bytes) -> tuple[bytes, bytes]:
        lines = split_lines(data)
        if not unique:
            # GNU sort breaks ties between equal keys by the whole line's bytes.
            pairs = sorted(((key(line), line) for line in lines), reverse=reverse)
            return join_lines([line for _key, line in pairs]), b""
        out: list[bytes] = []
        last: Decimal | bytes | None = None
        for line in sorted(lines, key=key, reverse=reverse):  # stable: input order in a tie
            k = key(line)
            if not out or k != last:
                out.append(line)
            last = k
        return join_lines(out), b""

    return run


def uniq(args: list[str]) -> Stage:
    given = flags_only(
        args, "cdui", {"count": "c", "repeated": "d", "unique": "u", "ignore-case": "i"}
    )
    counted, repeated, single, fold = ("c" in given, "d" in given, "u" in given, "i" in given)

    def run(data: bytes) -> tuple[bytes, bytes]:
        firsts: list[bytes] = []
        counts: list[int] = []
        last: bytes | None = None
        for line in split_lines(data):
            k = line.upper() if fold else line
            if firsts and k == last:
                counts[-1] += 1
            else:
                firsts.append(line)
                counts.append(1)
            last = k
        out = [
            f"{n:7d} ".encode() + first if counted else first
            for first, n in zip(firsts, counts, strict=True)
            if not ((repeated and n == 1) or (single and n > 1))
        ]
        return join_lines(out), b""

    return run


_RANGE = re.compile(r"(\d*)(-?)(\d*)")


def _positions(spec: str) -> list[tuple[int, int | None]]:
    """A cut LIST (``1,3-5,7-``) as inclusive 1-based ranges; GNU's errors are Unsupported."""
    ranges: list[tuple[int, int | None]] = []
    for part in spec.split(","):
        m = _RANGE.fullmatch(part)
        if m is None or not (m.group(1) or m.group(3)):
            raise Unsupported(spec)
        low = count(m.group(1)) if m.group(1) else 1
        high = count(m.group(3)) if m.group(3) else (None if m.group(2) else low)
        if low == 0 or (high is not None and high < low):
            raise Unsupported(spec)
        ranges.append((low, high))
    return ranges


def cut(args: list[str]) -> Stage:
    long = {
        "bytes=": "b",
        "characters=": "c",
        "fields=": "f",
        "delimiter=": "d",
        "only-delimited": "s",
        "output-delimiter=": "o",
    }
    options = getopt(args, "s", "bcfd", long)
    no_operands(options)
    given = dict(options.given)
    lists = [key for key, _ in options.given if key in "bcf"]
    if len(lists) != 1 or len(given) != len(options.given):
        raise Unsupported(" ".join(args))
    by_field = lists[0] == "f"
    if not by_field and ({"d", "s", "o"} & set(given)):
        raise Unsupported(" ".join(args))
    ranges = _positions(str(given[lists[0]]))
    delim = str(given.get("d", "\t")).encode()
    if len(delim) != 1:
        raise Unsupported(" ".join(args))
    joiner = str(given["o"]).encode() if "o" in given else delim
    only_delimited = "s" in given

    def wanted(n: int) -> bool:
        return any(low <= n and (high is None or n <= high) for low, high in ranges)

    def run(data: bytes) -> tuple[bytes, bytes]:
        out: list[bytes] = []
        for line in split_lines(data):
            if not by_field:
                out.append(bytes(b for n, b in enumerate(line, 1) if wanted(n)))
            elif delim not in line:
                if not only_delimited:
                    out.append(line)
            else:
                fields = line.split(delim)
                out.append(joiner.join(f for n, f in enumerate(fields, 1) if wanted(n)))
        return join_lines(out), b""

    return run


def pager(args: list[str]) -> Stage:
    """``less``/``more`` without options: their output is not a terminal, so they copy."""
    if args:
        raise Unsupported(" ".join(args))
    return lambda data: (data, b"")
