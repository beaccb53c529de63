"""``tr`` reading standard input, as GNU coreutils 9 does under LC_ALL=C.

Options ``-c -C -d -s -t`` (and their long forms), before the sets as tr requires. A set
holds bytes (a word's UTF-8 bytes: tr in the C locale sees bytes), escapes (``\\\\ \\a \\b
\\f \\n \\r \\t \\v``, ``\\NNN`` octal, any other ``\\c`` is ``c``), ascending ranges
(``a-z``, ``\\001-\\037``) and the twelve ``[:class:]`` names. SET2, when it translates,
is cut to SET1 or extended with its last byte, as tr does, and takes ``[:upper:]`` and
``[:lower:]`` only where SET1 has one of the two at the same place (case mapping).

Everything tr refuses or warns about (a reversed range, a missing or extra set, a
trailing backslash, ``\\400``, a misaligned or trailing class in SET2) and what is not
reproduced (``[c*n]`` repeats, ``[=c=]`` equivalence classes, a class in a complemented
translation) raise :class:`Unsupported`: that ``tr`` stays in the agent's command.
"""

from __future__ import annotations

from dataclasses import dataclass

from bridge_rules.repair.posixre import CLASSES
from bridge_rules.repair.stage import Stage, Unsupported, getopt

_LONG = {"complement": "c", "delete": "d", "squeeze-repeats": "s", "truncate-set1": "t"}
_ESCAPES = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11}
_OCTAL = b"01234567"
_CASE = ("upper", "lower")


@dataclass(frozen=True)
class _Set:
    """A set's bytes in order, and where each case class starts in them (for SET2)."""

    members: bytes
    classes: tuple[tuple[int, str], ...]
    """Each class's place in ``members`` and its name."""


def _byte(word: bytes, i: int) -> tuple[int, int]:
    """The byte a set holds at ``i`` (an escape read whole) and the index after it."""
    if word[i] != ord("\\"):
        return word[i], i + 1
    if i + 1 >= len(word):
        raise Unsupported("trailing backslash")  # tr warns: not portable
    c = word[i + 1]
    if c in _OCTAL:
        j = i + 1
        while j < len(word) and j < i + 4 and word[j] in _OCTAL:
            j += 1
        value = int(word[i + 1 : j], 8)
        if value > 0xFF:
            raise Unsupported("octal escape past \\377")  # tr warns and reads two digits
        return value, j
    return _ESCAPES.get(chr(c), c), i + 2


def _parse(text: str) -> _Set:
    try:
        word = text.encode("utf-8")
    except UnicodeEncodeError as err:  # a lone surrogate: no bytes the agent's shell has
        raise Unsupported("surrogate") from err
    out = bytearray()
    classes: list[tuple[int, str]] = []
    i = 0
    while i < len(word):
        if word.startswith((b"[:", b"[="), i):
            end = word.find(b":]" if word[i + 1] == ord(":") else b"=]", i + 2)
            if word[i + 1] == ord("=") or end < 0:
                if end >= 0 or word[i + 1] == ord("="):
                    raise Unsupported("equivalence class")
                raise Unsupported("[: without :]")
            name = word[i + 2 : end].decode("latin-1")
            if name not in CLASSES:
                raise Unsupported("unknown class")
            classes.append((len(out), name))
            out += bytes(sorted(CLASSES[name]))
            i = end + 2
            if word.startswith(b"-", i) and i + 1 < len(word):
                raise Unsupported("range from a class")
            continue
        if word[i] == ord("[") and i + 1 < len(word):
            _c, j = _byte(word, i + 1)
            if word.startswith(b"*", j):
                raise Unsupported("[c*n] repeat")
        low, j = _byte(word, i)
        if word.startswith(b"-", j) and j + 1 < len(word):
            if word.startswith((b"[:", b"[="), j + 1):
                raise Unsupported("range to a class")
            high, j = _byte(word, j + 1)
            if high < low:
                raise Unsupported("reversed range")  # tr's error
            out += bytes(range(low, high + 1))
        else:
            out.append(low)
        i = j
    return _Set(bytes(out), tuple(classes))


def _complement(members: bytes) -> bytes:
    chosen = set(members)
    return bytes(b for b in range(256) if b not in chosen)


def _translation(set1: _Set, set2: _Set, complement: bool, truncate: bool) -> bytes:
    """The 256-byte table SET1 -> SET2, or Unsupported where tr refuses or differs."""
    source = _complement(set1.members) if complement else set1.members
    target = set2.members
    if not target and source:
        raise Unsupported("empty SET2")  # tr's error unless -t
    if set2.classes:
        aligned = {at for at, name in set1.classes if name in _CASE}
        if (
            complement
            or truncate
            or any(name not in _CASE or at not in aligned for at, name in set2.classes)
        ):
            raise Unsupported("a class in SET2 other than an aligned [:upper:]/[:lower:]")
        if len(source) > len(target) and set2.classes[-1][0] + 26 == len(target):
            raise Unsupported("SET2 ends with a class")
    if complement and set1.classes and (truncate or len(set(target)) > 1):
        raise Unsupported("a complemented class mapped to more than one byte")  # tr's error
    if truncate:
        source = source[: len(target)]
    elif len(target) < len(source):
        target += target[-1:] * (len(source) - len(target))
    table = bytearray(range(256))
    for a, b in zip(source, target, strict=False):
        table[a] = b
    return bytes(table)


def _squeeze(data: bytes, members: frozenset[int]) -> bytes:
    out = bytearray()
    for b in data:
        if not (out and b == out[-1] and b in members):
            out.append(b)
    return bytes(out)


def _sets_wanted(delete: bool, squeeze: bool, given: int) -> int:
    """How many sets tr takes with these options (``-s`` alone takes one or two)."""
    if delete:
        return 2 if squeeze else 1
    if squeeze:
        return given if given in (1, 2) else 1
    return 2


def tr(args: list[str]) -> Stage:
    """Options end at the first set, as tr's getopt (``+``) stops there: in ``tr a -d``,
    ``-d`` is SET2 (``a`` becomes ``-``), not an option."""
    first_operand = next(
        (i for i, a in enumerate(args) if a in {"--", "-"} or not a.startswith("-")),
        len(args),
    )
    options = getopt(args[:first_operand], "cCdst", "", _LONG)  # no permutation, as tr
    operands = args[first_operand + (args[first_operand : first_operand + 1] == ["--"]) :]
    given = {"c" if k == "C" else k for k, _ in options.given}
    complement, delete, squeeze, truncate = ("c" in given, "d" in given, "s" in given, "t" in given)
    wanted = _sets_wanted(delete, squeeze, len(operands))
    if len(operands) != wanted or (truncate and (delete or wanted == 1)):
        raise Unsupported("sets")  # tr's missing or extra operand; -t where it means nothing
    set1 = _parse(operands[0])
    set2 = _parse(operands[1]) if wanted == 2 else None
    chosen = _complement(set1.members) if complement else set1.members
    if delete:
        dropped = chosen
        squeezed = frozenset(set2.members) if set2 is not None else frozenset()
        return lambda data: (_squeeze(data.translate(None, dropped), squeezed), b"")
    if set2 is None:
        only = frozenset(chosen)
        return lambda data: (_squeeze(data, only), b"")
    table = _translation(set1, set2, complement, truncate)
    if not squeeze:
        return lambda data: (data.translate(table), b"")
    into = frozenset(set2.members)
    return lambda data: (_squeeze(data.translate(table), into), b"")
