"""Colour for terminals, decided once per run the way other command-line tools decide it.

``--color never`` or ``NO_COLOR`` (any non-empty value, https://no-color.org) turn it off;
``--color always`` or ``FORCE_COLOR`` (non-empty) turn it on; otherwise (``auto``) a stream
gets colour when it is a terminal and ``TERM`` is not ``dumb``. Only severities, the
``=>`` of the deciding stage and the ``error:``/``warning:`` prefixes are coloured, so
the text stays the same, byte for byte, once the escapes are removed.
"""

from __future__ import annotations

import enum
import os
import re
from typing import TextIO


class Color(str, enum.Enum):
    """``--color`` values (an Enum, which every typer version shows and checks as choices)."""

    auto = "auto"
    always = "always"
    never = "never"


class TextOrJson(str, enum.Enum):
    """``--format`` of commands that print a trace or a report: text or json."""

    text = "text"
    json = "json"


_mode = "auto"

_RESET = "\x1b[0m"
_STYLES = {
    "error": "\x1b[1;31m",
    "warning": "\x1b[1;33m",
    "info": "\x1b[1;36m",
    "note": "\x1b[1;36m",
    "ok": "\x1b[1;32m",
}
# `file:line:col: error[BR301] ...`, `  file: note: ...` and `bridge-rules: error: ...`.
_SEVERITY = re.compile(r"(?<=: )(error|warning|info|note)(?=\[BR\d+\]|:)")
_CHOSEN = re.compile(r"^(\s*)(=>)", re.M)


def set_mode(mode: str) -> None:
    global _mode  # noqa: PLW0603 - one decision per process, made by the root option
    _mode = mode


def enabled(stream: TextIO) -> bool:
    if _mode == "never":
        return False
    if _mode == "always":
        return True
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"


def paint(text: str, stream: TextIO) -> str:
    """``text`` with its severities coloured, if ``stream`` should get colour."""
    if not enabled(stream):
        return text
    text = _SEVERITY.sub(lambda m: f"{_STYLES[m.group(1)]}{m.group(1)}{_RESET}", text)
    return _CHOSEN.sub(lambda m: f"{m.group(1)}{_STYLES['ok']}=>{_RESET}", text)
