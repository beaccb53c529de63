"""Every regular expression in a rule file, compiled once with RE2.

Rule files are data from other people, and in the proxy the text a pattern
runs over (a model id, a tool name, a system prompt) comes from the client.
Python's ``re`` backtracks, so a pattern such as ``(?:.*,){20}X`` against a
model id of commas takes exponential time. RE2 (the ``google-re2`` package)
matches in time linear in the input, whatever the pattern, by refusing the
constructs that need backtracking (backreferences, lookaround). Those are
reported as located lint errors:

* BR201: the pattern is not a regular expression at all;
* BR202: Python would accept it, but it needs backtracking, so RE2 refuses it.

Syntax: https://github.com/google/re2/wiki/Syntax (documented in docs/rule-format.md).
"""

from __future__ import annotations

import re
from typing import Any, Protocol

import re2

MAX_PATTERN = 1000
"""Longer patterns are refused: rule patterns are short, and length bounds RE2's memory."""

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # errors are reported as diagnostics, not on stderr

_GROUP_REF = re.compile(r"\\(?:g<([^>]*)>|(\d+)|(.)|$)")


class Pattern(Protocol):
    """What the runtime uses of a compiled RE2 pattern."""

    @property
    def pattern(self) -> str: ...

    def search(self, text: str) -> Any: ...

    def match(self, text: str) -> Any: ...

    def sub(self, replace: str, text: str) -> str: ...


class PatternError(ValueError):
    """``code`` is BR201 (not a regular expression) or BR202 (needs backtracking)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def _reason(exc: Exception) -> str:
    arg = exc.args[0] if exc.args else exc
    return arg.decode("utf-8", "replace") if isinstance(arg, bytes) else str(arg)


def compile_pattern(pattern: str) -> Pattern:
    """Compile ``pattern`` with RE2 or raise :class:`PatternError` saying why not."""
    if len(pattern) > MAX_PATTERN:
        raise PatternError("BR201", f"pattern is longer than {MAX_PATTERN} characters")
    try:
        compiled: Pattern = re2.compile(pattern, _OPTIONS)
    except (re2.error, TypeError, ValueError, UnicodeError) as exc:
        reason = _reason(exc)
        try:
            re.compile(pattern)
        except (re.error, TypeError, ValueError, OverflowError, RecursionError):
            raise PatternError(
                "BR201", f"invalid regular expression {pattern!r}: {reason}"
            ) from None
        raise PatternError(
            "BR202",
            f"regular expression {pattern!r} needs backtracking, which RE2 does not do "
            f"({reason}); matching must stay linear in the input",
        ) from None
    return _Linear(compiled)


_SURROGATES = range(0xD800, 0xE000)
# Stand-ins for lone surrogates, one code point each (so match positions do not move): the
# first block of private-use code points the text does not already hold.
_STAND_INS = (0xF0000, 0x100000)


class _Linear:
    """A compiled RE2 pattern that also takes text holding lone surrogates.

    RE2 matches UTF-8, which has no encoding for a lone surrogate (Python keeps one in a
    str, and a JSON ``"\\ud800"`` escape gives one). Such text is matched with each surrogate
    stood in for by a private-use code point, one for one, and changed back afterwards, so
    ``.`` still matches it and ``sub`` gives back every surrogate it did not replace. Text
    without one (all but hostile input) costs a ``try``.
    """

    __slots__ = ("_re", "groupindex", "groups", "pattern")

    def __init__(self, compiled: Any) -> None:
        self._re = compiled
        self.pattern: str = compiled.pattern
        self.groups: int = compiled.groups
        self.groupindex: Any = compiled.groupindex

    def search(self, text: str) -> Any:
        try:
            return self._re.search(text)
        except UnicodeEncodeError:
            swapped = _swap(text)
            return self._re.search(swapped[0]) if swapped else None

    def match(self, text: str) -> Any:
        try:
            return self._re.match(text)
        except UnicodeEncodeError:
            swapped = _swap(text)
            return self._re.match(swapped[0]) if swapped else None

    def sub(self, replace: str, text: str) -> str:
        try:
            return str(self._re.sub(replace, text))
        except UnicodeEncodeError:
            swapped = _swap(text)
            if swapped is None:
                return text
            clean, back = swapped
            return str(self._re.sub(replace, clean)).translate(back)


def _swap(text: str) -> tuple[str, dict[int, int]] | None:
    """``text`` with its lone surrogates stood in for, and the table that undoes it; None
    when the text already holds both blocks of stand-ins (then no match is reported)."""
    for base in _STAND_INS:
        if not any(base <= ord(ch) < base + len(_SURROGATES) for ch in text):
            there = {s: base + s - _SURROGATES.start for s in map(ord, text) if s in _SURROGATES}
            return text.translate(there), {v: k for k, v in there.items()}
    return None


def check_replacement(compiled: Pattern, replace: str) -> None:
    """Raise :class:`PatternError` (BR201) if ``replace`` names a group the pattern lacks.

    Checked at load so a bad ``\\2`` is a located error, not a silent no-op per request.
    """
    groups: int = getattr(compiled, "groups", 0)
    names: dict[str, int] = dict(getattr(compiled, "groupindex", {}) or {})
    for match in _GROUP_REF.finditer(replace):
        name, number, other = match.group(1), match.group(2), match.group(3)
        if match.group(0) == "\\":
            raise PatternError("BR201", f"replacement {replace!r} ends with a lone backslash")
        if other is not None:
            continue
        ref = name if name is not None else number
        if ref is None:
            continue
        if ref.isdigit():
            if int(ref) > groups:
                raise PatternError(
                    "BR201",
                    f"replacement {replace!r} refers to group {ref}; the pattern has {groups}",
                )
        elif ref not in names:
            raise PatternError(
                "BR201", f"replacement {replace!r} refers to unknown group name {ref!r}"
            )
