"""POSIX basic and extended regular expressions (GNU grep's dialect) translated to RE2.

RE2 runs over Latin-1 here, one character per byte, which is what grep sees under
LC_ALL=C. Every literal and set is written out as explicit bytes (``\\x41``,
``[\\x30-\\x39]``), so nothing is left to RE2's own idea of ``\\s``, case folding or
character ranges. The accepted subset is the one both engines agree on: literals,
``.``, bracket expressions (ranges, negation, ``[:class:]``), groups, alternation,
``* + ? {n,m}``, anchors, and GNU's ``\\w \\W \\s \\S \\b \\B``. Backreferences,
``\\< \\>``, equivalence classes, a quantifier with nothing to repeat, two quantifiers
in a row, stray backslashes and anything grep would warn about raise
:class:`Unsupported`: that grep stays in the agent's command.
"""

from __future__ import annotations

import string

from bridge_rules.repair.stage import Unsupported

_ALL = frozenset(range(256))
_WORD = frozenset((string.ascii_letters + string.digits + "_").encode())
_SPACE = frozenset(b" \t\n\v\f\r")
CLASSES: dict[str, frozenset[int]] = {
    "alpha": frozenset(string.ascii_letters.encode()),
    "digit": frozenset(string.digits.encode()),
    "alnum": frozenset((string.ascii_letters + string.digits).encode()),
    "upper": frozenset(string.ascii_uppercase.encode()),
    "lower": frozenset(string.ascii_lowercase.encode()),
    "space": _SPACE,
    "blank": frozenset(b" \t"),
    "punct": frozenset(string.punctuation.encode()),
    "print": frozenset(range(0x20, 0x7F)),
    "graph": frozenset(range(0x21, 0x7F)),
    "cntrl": frozenset([*range(0x20), 0x7F]),
    "xdigit": frozenset(string.hexdigits.encode()),
}
_ESCAPED_SETS = {"w": _WORD, "W": _ALL - _WORD, "s": _SPACE, "S": _ALL - _SPACE}
_MAX_REPEAT = 255
_NOT_NEWLINE = _ALL - {0x0A}
WORD_CLASS = "[\\x30-\\x39\\x41-\\x5a\\x5f\\x61-\\x7a]"
NOT_WORD_CLASS = "[^\\x30-\\x39\\x41-\\x5a\\x5f\\x61-\\x7a]"


def fold(members: frozenset[int]) -> frozenset[int]:
    """The set closed under ASCII case, as grep -i folds in the C locale."""
    extra = {b ^ 0x20 for b in members if chr(b).isascii() and chr(b).isalpha()}
    return members | extra


def charset(members: frozenset[int]) -> str:
    """An RE2 class of exactly these bytes."""
    if not members:
        return "[^\\x00-\\xff]"
    spans: list[str] = []
    ordered = sorted(members)
    start = prev = ordered[0]
    for b in [*ordered[1:], None]:
        if b is not None and b == prev + 1:
            prev = b
            continue
        spans.append(f"\\x{start:02x}" if start == prev else f"\\x{start:02x}-\\x{prev:02x}")
        if b is not None:
            start = prev = b
    return "[" + "".join(spans) + "]"


def literal(data: bytes, icase: bool) -> str:
    """A fixed string, byte for byte."""
    return "".join(
        charset(fold(frozenset([b]))) if icase and chr(b).isalpha() and b < 0x80 else f"\\x{b:02x}"
        for b in data
    )


class _Translator:
    """One pattern, read left to right; ``extended`` selects ERE, else GNU BRE."""

    def __init__(self, pattern: bytes, extended: bool, icase: bool) -> None:
        self.p, self.i, self.ere, self.icase = pattern, 0, extended, icase

    def peek(self, ahead: int = 0) -> int | None:
        j = self.i + ahead
        return self.p[j] if j < len(self.p) else None

    def at(self, text: bytes) -> bool:
        return self.p.startswith(text, self.i)

    def alternation_at(self) -> bool:
        return self.at(b"|") if self.ere else self.at(b"\\|")

    def close_at(self) -> bool:
        return self.at(b")") if self.ere else self.at(b"\\)")

    def translate(self, depth: int = 0) -> str:
        branches = [self.branch()]
        while self.alternation_at():
            self.i += 1 if self.ere else 2
            branches.append(self.branch())
        if self.close_at() and depth == 0:
            raise Unsupported("unmatched )")
        return "|".join(branches)

    def branch(self) -> str:
        items: list[str] = []
        start = True
        while self.i < len(self.p) and not self.alternation_at() and not self.close_at():
            atom, repeatable = self.atom(start)
            start = False  # BRE: '^' is an anchor only where a branch starts
            quantifier = self.quantifier()
            if quantifier:
                if not repeatable:
                    raise Unsupported("nothing to repeat")
                if self.quantifier():
                    raise Unsupported("two quantifiers in a row")
                atom += quantifier
            items.append(atom)
        return "".join(items)

    def quantifier(self) -> str:
        ch = self.peek()
        if ch == ord("*"):
            self.i += 1
            return "*"
        if self.ere and ch is not None and ch in b"+?":
            self.i += 1
            return chr(ch)
        if not self.ere and (self.at(b"\\+") or self.at(b"\\?")):
            self.i += 2
            return chr(self.p[self.i - 1])
        if self.at(b"{" if self.ere else b"\\{"):
            self.i += 1 if self.ere else 2
            return self.interval()
        return ""

    def interval(self) -> str:
        end = self.p.find(b"}" if self.ere else b"\\}", self.i)
        if end < 0:
            raise Unsupported("unterminated interval")
        low, comma, high = self.p[self.i : end].decode("latin-1").partition(",")
        self.i = end + (1 if self.ere else 2)
        if not (low or high) or not set(low + high) <= set(string.digits):
            raise Unsupported("bad interval")
        lo = int(low or 0)
        hi = int(high) if high else (None if comma else lo)
        if lo > _MAX_REPEAT or (hi is not None and (hi > _MAX_REPEAT or hi < lo)):
            raise Unsupported("interval out of range")
        return f"{{{lo},{'' if hi is None else hi}}}"

    def atom(self, start: bool) -> tuple[str, bool]:
        """The next atom in RE2 syntax, and whether a quantifier may follow it."""
        ch = self.p[self.i]
        if ch == ord("*") or (self.ere and ch in b"+?{"):
            raise Unsupported("nothing to repeat")
        if ch == ord("^") and (self.ere or start):
            self.i += 1
            return "^", False
        if ch == ord("$") and (self.ere or self._ends_branch(self.i + 1)):
            self.i += 1
            return "$", False
        if ch == ord("."):
            self.i += 1
            return charset(_NOT_NEWLINE), True
        if ch == ord("["):
            return self.bracket(), True
        if self.ere and ch == ord("("):
            self.i += 1
            return self.group(), True
        if self.ere and ch == ord(")"):
            raise Unsupported("unmatched )")
        if ch == ord("\\"):
            return self.escape()
        self.i += 1
        return literal(bytes([ch]), self.icase), True

    def _ends_branch(self, j: int) -> bool:
        rest = self.p[j:]
        return not rest or rest.startswith((b"\\)", b"\\|"))

    def group(self) -> str:
        inner = self.translate(depth=1)
        if not self.close_at():
            raise Unsupported("unmatched (")
        self.i += 1 if self.ere else 2
        return f"(?:{inner})"

    def escape(self) -> tuple[str, bool]:
        nxt = self.peek(1)
        if nxt is None:
            raise Unsupported("trailing backslash")
        self.i += 2
        c = chr(nxt)
        if c in _ESCAPED_SETS:
            return charset(_ESCAPED_SETS[c]), True
        if c in "bB":
            return "\\" + c, False
        if not self.ere and c == "(":
            return self.group(), True
        if not self.ere and c in "){}|+?":
            raise Unsupported("misplaced \\" + c)
        if c in ".[]*^$\\" or (self.ere and c in "+?(){}|"):
            return f"\\x{nxt:02x}", True
        raise Unsupported("\\" + c)

    def bracket(self) -> str:
        j = self.i + 1
        negate = j < len(self.p) and self.p[j] == ord("^")
        j += negate
        if j < len(self.p) and self.p[j] == ord(":"):
            raise Unsupported("[: is grep's class-syntax warning")
        members: set[int] = set()
        first = after_class = True
        while True:
            if j >= len(self.p):
                raise Unsupported("unterminated [")
            ch = self.p[j]
            if ch == ord("]") and not first:
                break
            if ch == ord("-") and after_class and not first and not self.p.startswith(b"-]", j):
                raise Unsupported("range from a class")
            first = after_class = False
            if self.p.startswith(b"[:", j):
                end = self.p.find(b":]", j + 2)
                name = self.p[j + 2 : end].decode("latin-1") if end > 0 else ""
                if name not in CLASSES:
                    raise Unsupported("unknown class")
                members |= CLASSES[name]
                j, after_class = end + 2, True
                continue
            if self.p.startswith((b"[.", b"[="), j):
                raise Unsupported("collating element")
            if j + 2 < len(self.p) and self.p[j + 1] == ord("-") and self.p[j + 2] != ord("]"):
                high = self.p[j + 2]
                if high < ch or high == ord("[") or self.p.startswith(b"-", j + 3):
                    raise Unsupported("range")
                members |= set(range(ch, high + 1))
                j += 3
                continue
            members.add(ch)
            j += 1
        self.i = j + 1
        chosen = fold(frozenset(members)) if self.icase else frozenset(members)
        return charset(_NOT_NEWLINE - chosen if negate else chosen)


def translate(pattern: bytes, extended: bool, icase: bool) -> str:
    """One grep pattern (no newline) as an RE2 expression over Latin-1."""
    return _Translator(pattern, extended, icase).translate()
