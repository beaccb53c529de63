"""JSON in and out of the proxy: the C parsers' speed, without orjson's two limits.

orjson turns integers beyond 64 bits into floats (``18446744073709551617`` comes back
as ``1.8446744073709552e+19``), refuses to parse deeper than 1,024 levels and to
write deeper than 254. Payloads are client data, so both happen. Here:

* reading is msgspec's JSON decoder: as fast as orjson, and exact for integers of
  any size up to Python's int-to-string limit (4,300 digits, a guard against
  quadratic conversion). A longer integer goes to the standard library's C parser
  and is kept as a :class:`BigNumber` holding its text, written back as it came.
  Nesting past the recursion limit goes to a parser with explicit stacks. Invalid
  JSON raises orjson's error, with its position;
* writing is orjson's whenever it takes the value. When it refuses (a big integer,
  a :class:`BigNumber`, the depth, a lone surrogate), containers near the top are
  offered to it one by one, so only the path down to what it refuses is written
  value by value.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable
from typing import Any

import msgspec
import orjson

from bridge_rules.jsonslow import _INT_DIGITS, BigNumber, JSONDecodeError, _encode, _Parser

__all__ = ["STACK_PARSER_LIMIT", "BigNumber", "JSONDecodeError", "NestedTooDeep", "dumps", "loads"]


def loads(data: bytes | bytearray | memoryview | str) -> Any:
    """Parse JSON exactly; raises :data:`JSONDecodeError` (a ``ValueError``) when invalid."""
    raw = data.encode() if isinstance(data, str) else bytes(data)
    try:
        return _decode(raw)
    except msgspec.ValidationError:  # a number it cannot hold: a longer integer, or 1e400
        return _exact(_text(raw), deep=False)
    except RecursionError:
        return _exact(_text(raw), deep=True)
    except (msgspec.DecodeError, UnicodeDecodeError):
        pass
    try:
        orjson.loads(raw)  # not JSON: orjson says where (its error is a JSONDecodeError)
    except orjson.JSONDecodeError as exc:
        if "depth" not in str(exc):
            raise
        return _exact(_text(raw), deep=True)  # too deep for orjson to tell: the stack parser
    return _exact(_text(raw), deep=False)  # orjson disagrees: the exact path decides


def loads_answer(data: bytes | bytearray | memoryview) -> Any:
    """:func:`loads`, with a ``\\u`` escape that leaves a lone surrogate read, as the JSON
    grammar allows (RFC 8259 8.2): an upstream's answer holding one is read by every client
    anyway, so the proxy reads it too, to apply the rules to it, where refusing it would
    leave it unread. Requests keep :func:`loads`' refusal."""
    raw = bytes(data)
    try:
        return loads(raw)
    except JSONDecodeError:
        if b"\\u" not in raw:
            raise
    return _read_exact(_text(raw), deep=False)


def top_field(data: bytes, key: str) -> Any:
    """The value under ``key`` at the top of a JSON document, without building the rest of
    it: what ``loads(data).get(key)`` gives when the document is an object, None when it is
    not one or lacks the key. Raises :data:`JSONDecodeError` when the document is not JSON.

    The rest of the document is scanned, not read as :func:`loads` reads it: a document
    that ``loads`` refuses only for a number past a double's range elsewhere (``1e400``)
    still gives its ``key``. A document the quick reader cannot take (not an object, a
    lone surrogate, a number it cannot hold under ``key``) is read by :func:`loads`.
    """
    try:
        return _field_reader(key)(data).value
    except (msgspec.ValidationError, msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        pass  # not an object, or not read quickly: read it whole
    payload = loads(data)
    return payload.get(key) if isinstance(payload, dict) else None


@functools.cache
def _field_reader(key: str) -> Callable[[bytes], Any]:
    fields = msgspec.defstruct("Field", [("value", Any, None)], rename={"value": key})
    return msgspec.json.Decoder(fields).decode


def _text(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JSONDecodeError(f"invalid UTF-8: {exc.reason}", "", exc.start) from None


def _exact(text: str, deep: bool) -> Any:
    """The standard library's C parser, integers exact; the explicit-stack parser for
    nesting past the recursion limit, up to :data:`STACK_PARSER_LIMIT`."""
    value = _read_exact(text, deep)
    if _holds_lone_surrogate(value):  # refused here as the fast path refuses it
        raise JSONDecodeError("a \\u escape leaves a lone surrogate", text, _lone_escape_at(text))
    return value


def _read_exact(text: str, deep: bool) -> Any:
    if not deep:
        try:
            return _EXACT.decode(text)
        except RecursionError:
            pass
        except _Refused as exc:
            number = exc.args[0]
            message = "number out of range for a double"
            if number[-1:].isalpha():  # NaN, Infinity, -Infinity
                message = "NaN and Infinity are not JSON"
            raise JSONDecodeError(message, text, max(text.find(number), 0)) from None
    if len(text) > STACK_PARSER_LIMIT:
        raise NestedTooDeep(len(text))
    return _Parser(text).parse()


STACK_PARSER_LIMIT = 256 * 1024
"""Characters the explicit-stack parser reads at most. It is the only reader of JSON nested
past the C parsers' depth (about 1,000 levels) and reads about 1 MB a second, so a larger
body that deep is refused: 32 MB of brackets would otherwise hold a proxy worker for a
minute."""


class NestedTooDeep(JSONDecodeError):
    """JSON nested past the C parsers' depth and larger than :data:`STACK_PARSER_LIMIT`."""

    def __init__(self, size: int) -> None:
        message = (
            f"nested deeper than about 1,000 levels in {size:,} characters; JSON that deep "
            f"is read up to {STACK_PARSER_LIMIT:,}"
        )
        super().__init__(message, "", 0)
        self.args = (message,)


_SURROGATE_ESCAPES = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|\\u[dD][89a-fA-F][0-9a-fA-F]{2}"
)


def _holds_lone_surrogate(value: Any) -> bool:
    stack = [value]
    pop, many = stack.pop, stack.extend
    while stack:
        item = pop()
        kind = type(item)
        if kind is dict:
            many(item)
            many(item.values())
        elif kind is list:
            many(item)
        elif kind is str and not item.isascii():
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
    return False


def _lone_escape_at(text: str) -> int:
    """Where the first unpaired surrogate escape stands (0 when none is found)."""
    for match in _SURROGATE_ESCAPES.finditer(text):
        if len(match.group()) == 6:
            return match.start()
    return 0


class _Refused(Exception):
    """A number JSON does not have (NaN, Infinity) or a double cannot hold."""


def _exact_int(text: str) -> int | BigNumber:
    return int(text) if len(text) <= _INT_DIGITS else BigNumber(text)


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _Refused(text)
    return value


def _no_constant(text: str) -> None:
    raise _Refused(text)


_decode = msgspec.json.Decoder().decode
_EXACT = json.JSONDecoder(
    parse_int=_exact_int, parse_float=_finite_float, parse_constant=_no_constant
)


def dumps(value: Any) -> bytes:
    """Compact JSON, as orjson writes it; raises ``TypeError`` for non-JSON values."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return _encode(value)
