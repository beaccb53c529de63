"""JavaScript ``parseFloat`` semantics, which pi-tool-guard's coercion inherits.

``"10"`` -> 10, ``"10abc"`` -> 10, ``"1.5"`` -> 1.5, ``" .5e1x"`` -> 5; no
numeric prefix -> None (JavaScript's NaN, which pi-tool-guard leaves alone).
"""

from __future__ import annotations

import math
import re

# ECMAScript StrWhiteSpaceChar: WhiteSpace and LineTerminator.
_JS_SPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_PREFIX = re.compile(r"[+-]?(?:Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)")


def parse_float(text: str) -> int | float | None:
    """The number JavaScript's ``parseFloat(text)`` gives, or None for NaN.

    Infinity is also None: it has no JSON form, so the value is left unchanged.
    Integral results are ints so ``"10"`` serialises as ``10``.
    """
    match = _PREFIX.match(text.lstrip(_JS_SPACE))
    if match is None:
        return None
    try:
        value = float(match.group().replace("Infinity", "inf"))
    except OverflowError:  # pragma: no cover - float() saturates instead
        return None
    if not math.isfinite(value):
        return None
    if value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value
