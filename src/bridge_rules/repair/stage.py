"""What every reimplemented pipeline stage shares: its type, GNU option parsing, lines.

A stage is built once from its words (at strip time, and again, cached, when the
result comes back) and then runs over bytes. Building it is where every option and
pattern is checked: an :class:`Unsupported` there keeps the stage in the agent's
command. Running it never fails: whatever bytes come back get the real tool's answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

Stage = Callable[[bytes], tuple[bytes, bytes]]
"""Standard input -> (standard output, standard error), as the real tool under LC_ALL=C."""


class Unsupported(Exception):
    """An option, operand or pattern this reimplementation cannot reproduce exactly."""


@dataclass(frozen=True)
class Options:
    """Parsed options in command-line order (``(key, value or None)``) and the operands."""

    given: tuple[tuple[str, str | None], ...]
    operands: tuple[str, ...]

    def has(self, key: str) -> bool:
        return any(k == key for k, _ in self.given)


def getopt(
    args: list[str], flags: str, with_value: str, long: Mapping[str, str] | None = None
) -> Options:
    """GNU ``getopt_long`` with argument permutation, over one tool's known options.

    ``flags`` and ``with_value`` are short option letters; ``long`` maps a long name to
    its short key, with a trailing ``=`` when it takes a value. Anything else is
    :class:`Unsupported`, never guessed.
    """
    long = long or {}
    given: list[tuple[str, str | None]] = []
    operands: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            operands.extend(args[i:])
            break
        if arg.startswith("--"):
            name, eq, value = arg[2:].partition("=")
            if name + "=" in long:
                if not eq:
                    if i >= len(args):
                        raise Unsupported(arg)
                    value, i = args[i], i + 1
                given.append((long[name + "="], value))
            elif name in long and not eq:
                given.append((long[name], None))
            else:
                raise Unsupported(arg)
            continue
        if not arg.startswith("-") or arg == "-":
            operands.append(arg)
            continue
        j = 1
        while j < len(arg):
            letter = arg[j]
            j += 1
            if letter in flags:
                given.append((letter, None))
            elif letter in with_value:
                if j < len(arg):
                    given.append((letter, arg[j:]))
                elif i < len(args):
                    given.append((letter, args[i]))
                    i += 1
                else:
                    raise Unsupported(arg)
                break
            else:
                raise Unsupported(arg)
    return Options(tuple(given), tuple(operands))


def no_operands(options: Options) -> None:
    """Standard input only: an operand would be a file in the agent's directory."""
    if options.operands:
        raise Unsupported(" ".join(options.operands))


def flags_only(args: list[str], letters: str, long: Mapping[str, str]) -> set[str]:
    """The option letters given to a tool that takes only flags and reads standard input."""
    options = getopt(args, letters, "", long)
    no_operands(options)
    return {key for key, _ in options.given}


_COUNT = re.compile(r"\d{1,18}")


def count(value: str) -> int:
    """A plain decimal count (no sign, no size suffix: those are the caller's to allow)."""
    if not _COUNT.fullmatch(value):
        raise Unsupported(value)
    return int(value)


def split_lines(data: bytes) -> list[bytes]:
    """Lines without their newline; a last line without one still counts, as the tools read."""
    if not data:
        return []
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines.pop()
    return lines


def join_lines(lines: list[bytes]) -> bytes:
    """Each line newline-terminated, as every line-writing tool writes them."""
    return b"".join(line + b"\n" for line in lines)
