"""A pipeline stage's words, exactly as bash would pass them, or None when that needs the agent.

A stripped stage runs in the proxy, not in the agent's shell, so its words must not
depend on anything only that shell knows: variables, command substitution, globs
(the agent's files), tilde and brace expansion, redirections. This lexer accepts plain
words, single quotes, double quotes without expansions and backslash escapes, and
refuses everything else; a refused stage stays in the command the agent runs.
"""

from __future__ import annotations

# Unquoted, these make bash expand, glob, redirect, split or end the command.
_SPECIAL = frozenset("$`*?[]{}~<>|&;()!#\n\r")
_BLANKS = frozenset(" \t")
_DOUBLE_ESCAPES = frozenset('$`"\\')


def shell_words(source: str) -> list[str] | None:
    """The argument vector bash builds from ``source``, or None when it needs expansion."""
    words: list[str] = []
    word: list[str] | None = None
    i, n = 0, len(source)
    while i < n:
        ch = source[i]
        if ch in _BLANKS:
            if word is not None:
                words.append("".join(word))
                word = None
            i += 1
            continue
        if word is None:
            word = []
        if ch == "'":
            end = source.find("'", i + 1)
            if end < 0:
                return None
            word.append(source[i + 1 : end])
            i = end + 1
        elif ch == '"':
            after = _double_quoted(source, i + 1, word)
            if after is None:
                return None
            i = after
        elif ch == "\\":
            if i + 1 >= n or source[i + 1] in "\n\r":
                return None
            word.append(source[i + 1])
            i += 2
        elif ch in _SPECIAL:
            return None
        else:
            word.append(ch)
            i += 1
    if word is not None:
        words.append("".join(word))
    return words


def _double_quoted(source: str, i: int, word: list[str]) -> int | None:
    """Reads a double-quoted string's body into ``word``; the index after its closing quote."""
    while i < len(source):
        ch = source[i]
        if ch == '"':
            return i + 1
        if ch in "$`!\n\r":
            return None
        if ch == "\\" and i + 1 < len(source):
            nxt = source[i + 1]
            if nxt in "\n\r":
                return None
            word.append(nxt if nxt in _DOUBLE_ESCAPES else ch + nxt)
            i += 2
            continue
        word.append(ch)
        i += 1
    return None
