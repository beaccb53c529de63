"""Plain YAML scalars as rule files may hold them: resolved as ruamel's YAML 1.2 loader
resolves them (built once, :func:`scalars`), then checked (finite, in range, valid
Unicode, dates as text). A construct a rule file may not hold is :class:`Refused` with
its located diagnostic."""

from __future__ import annotations

import datetime
import functools
import math
from collections.abc import Callable
from typing import Any

from bridge_rules.diagnostics import Diagnostic, error
from bridge_rules.source import Span

# Integers a rule file may hold: anything larger is a mistake or an attack, and the
# JSON the rules act on could not carry it faithfully to most clients anyway.
MAX_INT = 2**63 - 1
_CORE = "tag:yaml.org,2002:"
_STR = _CORE + "str"
# Implicit types built by ruamel's constructor; anything else (`=`, `<<`) stays text.
_CONSTRUCTED = frozenset(_CORE + t for t in ("null", "bool", "int", "float", "timestamp"))


class Refused(Exception):
    """A construct rule files do not allow; carries its located diagnostic."""

    def __init__(self, diag: Diagnostic) -> None:
        super().__init__(diag.message)
        self.diag = diag


def refuse(code: str, message: str, span: Span, hint: str | None = None) -> Refused:
    return Refused(error(code, message, span, hint=hint))


class _Scalars:
    """YAML 1.2 resolution of plain scalars, exactly as ruamel's loader does it.

    Built once (:func:`scalars`): its tables cost more than parsing a small rule file.
    """

    def __init__(self) -> None:
        from ruamel.yaml import YAML
        from ruamel.yaml.nodes import ScalarNode
        from ruamel.yaml.resolver import VersionedResolver

        table = VersionedResolver(version=(1, 2)).versioned_resolver
        # first character ("" for the empty scalar) -> [(tag, regex)], as ruamel's
        # ``resolve`` scans them; scanning the table here skips its per-call version
        # lookups, a third of the load time of a large table.
        anywhere = list(table.get(None, []))
        self._table = {key: [*rules, *anywhere] for key, rules in table.items() if key is not None}
        self._anywhere = anywhere
        # The constructor's functions for the implicit types, called directly: they read
        # only the node, where ``construct_object`` would also remember every node it saw.
        # So one instance serves every document and thread.
        constructor = YAML(typ="safe", pure=True).constructor
        functions = type(constructor).yaml_constructors
        self._construct: dict[str, Callable[[Any], Any]] = {
            tag: functools.partial(functions[tag], constructor) for tag in _CONSTRUCTED
        }
        self._node: Callable[[str, str], Any] = ScalarNode

    def certainly_text(self, value: str) -> bool:
        """A cheap test that a plain scalar resolves to a string.

        In YAML 1.2 only scalars starting with a digit, a sign or a dot can be
        numbers or dates; every other implicit type is one of a few short words
        (``true``, ``null``, ``~``, ``<<``, ``=``), never longer than five characters.
        """
        return bool(value) and (
            value[0] not in self._table or (len(value) > 5 and value[0] not in "0123456789+-.")
        )

    def plain(self, value: str, at: Span) -> tuple[str, Any]:
        """(resolved tag, constructed value) of a plain scalar."""
        candidates = self._table.get(value[0] if value else "", self._anywhere)
        if not candidates:
            return _STR, value
        tag = next((str(tag) for tag, regex in candidates if regex.match(value)), _STR)
        construct = self._construct.get(tag)
        if construct is None:
            return tag, value
        try:
            return tag, construct(self._node(tag, value))
        except (ValueError, OverflowError):  # an int of thousands of digits, a bad date
            if tag == _CORE + "int":
                raise refuse("BR013", "integer out of range (thousands of digits)", at) from None
            raise refuse("BR003", f"invalid {tag.replace(_CORE, '')} value", at) from None


@functools.cache
def scalars() -> _Scalars:
    return _Scalars()


def _text(value: str, at: Span) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = f"\\u{ord(value[exc.start]):04x}"
        raise refuse(
            "BR014", f"string holds a lone surrogate ({bad}), which is not valid Unicode", at
        ) from None
    return value


def _checked(value: Any, at: Span) -> Any:
    """A constructed scalar as plain data: finite, in range, dates as ISO text."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        if abs(value) > MAX_INT:
            raise refuse("BR013", "integer out of range (more than 63 bits)", at)
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise refuse("BR013", f"number {value} is not finite", at, hint="use a finite number")
        return float(value)
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    return _text(str(value), at)
