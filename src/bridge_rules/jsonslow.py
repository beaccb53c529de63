"""The slow paths of :mod:`bridge_rules.jsonio`: an explicit-stack JSON reader for nesting
past the C parsers' depth, and a writer for what orjson refuses (integers past 64 bits,
:class:`BigNumber`, nesting past 254 levels, lone surrogates). Kept apart so the fast
paths read as what they are; nothing here runs for an ordinary body."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from json.encoder import encode_basestring_ascii
from typing import Any

import orjson

JSONDecodeError = json.JSONDecodeError  # orjson's own error is a subclass of it
# The stdlib's C string scanner (not in the type stubs): text after an opening quote.
scanstring: Callable[[str, int, bool], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]

_INT_DIGITS = 4300  # CPython's default int max str digits
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_WS = re.compile(r"[ \t\n\r]*")
_LITERALS = (("true", True), ("false", False), ("null", None))


class BigNumber:
    """An integer too long for ``int()``; written back exactly as it was read."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BigNumber) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return f"BigNumber({len(self.text)} digits)"


# ------------------------------------------------------------------ slow path, reading
class _Parser:
    def __init__(self, text: str) -> None:
        self.s = text

    def fail(self, message: str, pos: int) -> JSONDecodeError:
        return JSONDecodeError(message, self.s, pos)

    def ws(self, pos: int) -> int:
        m = _WS.match(self.s, pos)
        assert m is not None
        return m.end()

    def key(self, pos: int) -> tuple[str, int]:
        if self.s[pos : pos + 1] != '"':
            raise self.fail("expected a string key", pos)
        key, pos = scanstring(self.s, pos + 1, True)
        pos = self.ws(pos)
        if self.s[pos : pos + 1] != ":":
            raise self.fail("expected ':'", pos)
        return key, self.ws(pos + 1)

    def scalar(self, pos: int) -> tuple[Any, int]:
        s = self.s
        if s[pos : pos + 1] == '"':
            return scanstring(s, pos + 1, True)
        for word, value in _LITERALS:
            if s.startswith(word, pos):
                return value, pos + len(word)
        m = _NUMBER.match(s, pos)
        if m is None:
            raise self.fail("expected a value", pos)
        text = m.group()
        if m.group(1) or m.group(2):
            number = float(text)
            if math.isinf(number):
                raise self.fail("number out of range for a double", pos)
            return number, m.end()
        if len(text) > _INT_DIGITS:
            return BigNumber(text), m.end()
        return int(text), m.end()

    def parse(self) -> Any:
        s = self.s
        stack: list[Any] = []  # open containers, innermost last
        keys: list[str] = []  # the pending key of each open object
        pos = self.ws(0)
        while True:
            opener = s[pos : pos + 1]
            value: Any
            if opener in ("{", "["):
                pos = self.ws(pos + 1)
                if s[pos : pos + 1] == ("}" if opener == "{" else "]"):
                    value, pos = ({} if opener == "{" else []), pos + 1
                else:
                    stack.append({} if opener == "{" else [])
                    if opener == "{":
                        key, pos = self.key(pos)
                        keys.append(key)
                    continue
            else:
                value, pos = self.scalar(pos)
            while True:  # attach the value; close every container that ends here
                pos = self.ws(pos)
                if not stack:
                    if pos != len(s):
                        raise self.fail("extra data after the value", pos)
                    return value
                top = stack[-1]
                is_obj = isinstance(top, dict)
                if is_obj:
                    top[keys[-1]] = value
                else:
                    top.append(value)
                ch = s[pos : pos + 1]
                if ch == ",":
                    pos = self.ws(pos + 1)
                    if is_obj:
                        keys[-1], pos = self.key(pos)
                    break
                if ch != ("}" if is_obj else "]"):
                    raise self.fail("expected ',' or a closing bracket", pos)
                pos += 1
                value = stack.pop()
                if is_obj:
                    keys.pop()


# ------------------------------------------------------------------ slow path, writing
_END = object()
_CONTAINERS = (dict, list, tuple)
_OFFER_DEPTH = 8
"""Containers this close to the top are offered to orjson whole: what a refused offer
wastes is bounded by this many passes over the body, even down a chain nested past 254."""


def _scalar(value: Any) -> bytes:
    if isinstance(value, BigNumber):
        return value.text.encode()
    if isinstance(value, int) and not isinstance(value, bool):
        return int.__repr__(value).encode()
    if isinstance(value, str):
        try:
            return orjson.dumps(value)
        except TypeError:  # a lone surrogate: keep it as the escape it was read from
            return encode_basestring_ascii(value).encode()
    try:
        return orjson.dumps(value)
    except TypeError:
        raise TypeError(f"Type is not JSON serializable: {type(value).__name__}") from None


def _encode(value: Any) -> bytes:
    """``value`` (which orjson refused whole) as orjson would write it. Below the top,
    each container within :data:`_OFFER_DEPTH` levels is offered to orjson first; the
    ones it refuses (and everything deeper) are written here, value by value."""
    out: list[bytes] = []
    stack: list[list[Any]] = []  # [iterator, closer, first, is_object]
    current = value
    while True:
        whole: bytes | None = None
        if 0 < len(stack) < _OFFER_DEPTH and type(current) in _CONTAINERS:
            try:
                whole = orjson.dumps(current)
            except TypeError:  # refused: written here, value by value
                whole = None
        if whole is not None:
            out.append(whole)
        elif isinstance(current, dict):
            out.append(b"{")
            stack.append([iter(current.items()), b"}", True, True])
        elif isinstance(current, (list, tuple)):
            out.append(b"[")
            stack.append([iter(current), b"]", True, False])
        else:
            out.append(_scalar(current))
        while stack:
            frame = stack[-1]
            item: Any = next(frame[0], _END)
            if item is _END:
                out.append(frame[1])
                stack.pop()
                continue
            if not frame[2]:
                out.append(b",")
            frame[2] = False
            if frame[3]:
                key, current = item
                if not isinstance(key, str):
                    raise TypeError("Dict key must be str")
                out.append(_scalar(key) + b":")
            else:
                current = item
            break
        else:
            return b"".join(out)
