"""YAML parse events -> plain data and a source map, in one pass.

Building from events (libyaml's C parser when ``ruamel.yaml.clib`` is installed,
ruamel's pure-Python parser otherwise) instead of ruamel's round-trip objects
makes a 100,000-entry table load in a fraction of a second, and lets every
construct a rule file may not hold be refused where it is written: tags other
than ``!!str``/``!!map``/``!!seq``, merge keys, keys that are not strings,
non-finite or huge numbers, lone surrogates, and documents nested or expanded
(through aliases) beyond the limits.
"""

from __future__ import annotations

import datetime
import functools
import math
from collections.abc import Callable, Iterator
from typing import Any

from bridge_rules.diagnostics import Diagnostic, error
from bridge_rules.source import DocPath, SourceMap, Span, escape

# Integers a rule file may hold: anything larger is a mistake or an attack, and the
# JSON the rules act on could not carry it faithfully to most clients anyway.
MAX_INT = 2**63 - 1
# Rule files nest about six levels; a default value may hold some JSON.
MAX_DEPTH = 64

_CORE = "tag:yaml.org,2002:"
_STR, _MERGE = _CORE + "str", _CORE + "merge"
_COLLECTION_TAGS = frozenset({_CORE + "map", _CORE + "seq"})
# Implicit types built by ruamel's constructor; anything else (`=`, `<<`) stays text.
_CONSTRUCTED = frozenset(_CORE + t for t in ("null", "bool", "int", "float", "timestamp"))


class Refused(Exception):
    """A construct rule files do not allow; carries its located diagnostic."""

    def __init__(self, diag: Diagnostic) -> None:
        super().__init__(diag.message)
        self.diag = diag


class TooLarge(Exception):
    """Aliases expand the document past the node budget."""


def refuse(code: str, message: str, span: Span, hint: str | None = None) -> Refused:
    return Refused(error(code, message, span, hint=hint))


def describe(value: Any) -> str:
    """What kind of value this is, in words ("a number"), for messages that must not echo it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, (datetime.date, datetime.datetime)):
        return "a date"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (tuple, list)):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def _has_c_parser() -> bool:
    try:
        from ruamel.yaml.cyaml import CBaseLoader  # noqa: F401
    except ImportError:  # pragma: no cover - ruamel.yaml.clib is a dependency
        return False
    return True


C_PARSER = _has_c_parser()


def parse_events(text: str, fast: bool = C_PARSER) -> Iterator[Any]:
    """The parse events of ``text``: libyaml when ``fast``, else ruamel's own parser.

    libyaml is stricter in a few corners (``[12:30]`` in a flow sequence), so a
    caller that meets a syntax error retries with ``fast=False``.
    """
    if not fast:
        from ruamel.yaml import YAML

        yield from YAML(typ="safe", pure=True).parse(text)
        return
    from ruamel.yaml.cyaml import CBaseLoader

    loader = CBaseLoader(text)
    try:
        while loader.check_event():
            yield loader.get_event()
    finally:
        loader.dispose()


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


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


Pos = tuple[int, int]
_Entry = tuple[DocPath, Pos, Pos]


def _pos(event: Any) -> Pos:
    mark = event.start_mark
    return (mark.line + 1, mark.column + 1)


class Builder:
    """Consumes the events of one document and returns its plain data.

    Anchored values are remembered with their size and the source-map entries
    written while building them, so an alias expands to a copy with the
    anchor's positions and counts against the node budget like the original.
    The common case (an untagged, unanchored scalar that can only be a string)
    takes a short path: a large alias table is almost nothing else.
    """

    def __init__(self, smap: SourceMap, budget: int, fast: bool = C_PARSER) -> None:
        from ruamel.yaml.events import ScalarEvent

        self.smap = smap
        self.file = smap.file
        self.budget = budget
        self.scalars = scalars()
        self._scalar_event = ScalarEvent
        self._anchors: dict[str, tuple[Any, int, DocPath, list[_Entry]]] = {}
        self._log: list[_Entry] | None = None
        # libyaml refuses surrogate escapes itself; ruamel's own parser does not.
        self._check_text = not fast

    def span(self, event: Any) -> Span:
        line, col = _pos(event)
        return Span(self.file, line, col)

    def _add(self, path: DocPath, key: Pos, value: Pos) -> None:
        self.smap.add_position(path, key, value)
        if self._log is not None:
            self._log.append((path, key, value))

    def _string(self, event: Any) -> str | None:
        """The value of a scalar event that can only be a string, else None."""
        if event.__class__ is not self._scalar_event or event.tag or event.anchor:
            return None
        value: str = event.value
        if event.implicit[0] and not self.scalars.certainly_text(value):
            return None
        if self._check_text:
            _text(value, self.span(event))
        return value

    def node(self, event: Any, events: Iterator[Any], path: DocPath, depth: int) -> Any:
        self.budget -= 1
        if self.budget < 0:
            raise TooLarge
        kind = type(event).__name__
        if kind == "AliasEvent":
            return self._alias(event, path)
        anchor = getattr(event, "anchor", None)
        if anchor is None:
            return self._build(kind, event, events, path, depth)
        outer = self._log
        self._log = [] if outer is None else outer
        start, budget = len(self._log), self.budget
        value = self._build(kind, event, events, path, depth)
        entries = self._log[start:]
        self._anchors[anchor] = (value, budget - self.budget + 1, path, entries)
        if outer is None:
            self._log = None
        return value

    def _alias(self, event: Any, path: DocPath) -> Any:
        found = self._anchors.get(event.anchor)
        if found is None:  # the parser reports undefined aliases; be safe anyway
            raise refuse("BR003", f"undefined alias '{escape(event.anchor)}'", self.span(event))
        value, size, base, entries = found
        self.budget -= size
        if self.budget < 0:
            raise TooLarge
        for old, key, val in entries:
            self._add((*path, *old[len(base) :]), key, val)
        return _copy(value)

    def _build(
        self, kind: str, event: Any, events: Iterator[Any], path: DocPath, depth: int
    ) -> Any:
        tag = getattr(event, "tag", None)
        if kind == "ScalarEvent":
            at = self.span(event)
            if tag is not None and tag != _STR:
                raise self._tagged(tag, at)
            if tag is None and event.implicit[0]:
                resolved, value = self.scalars.plain(event.value, at)
                if resolved == _MERGE:
                    return "<<"
                return _checked(value, at)
            return _text(event.value, at)
        if tag is not None and tag not in _COLLECTION_TAGS:
            raise self._tagged(tag, self.span(event))
        if depth >= MAX_DEPTH:
            raise refuse(
                "BR010", f"document is nested more than {MAX_DEPTH} deep", self.span(event)
            )
        if kind == "SequenceStartEvent":
            return self._sequence(events, path, depth)
        return self._mapping(events, path, depth)

    def _tagged(self, tag: str, at: Span) -> Refused:
        shown = escape(str(tag).replace(_CORE, "!!"))[:80]
        return refuse("BR011", f"YAML tags are not supported in rule files (found '{shown}')", at)

    def _sequence(self, events: Iterator[Any], path: DocPath, depth: int) -> list[Any]:
        items: list[Any] = []
        for index, event in enumerate(events):
            if type(event).__name__ == "SequenceEndEvent":
                return items
            at = _pos(event)
            child = (*path, index)
            self._add(child, at, at)
            items.append(self.node(event, events, child, depth + 1))
        return items  # pragma: no cover - the parser always closes a sequence

    def _mapping(self, events: Iterator[Any], path: DocPath, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for event in events:
            key = self._string(event)
            if key is None:
                if type(event).__name__ == "MappingEndEvent":
                    return out
                key = self._key(event, self.span(event))
            kpos = _pos(event)
            if key in out:
                first = self.smap.key_span((*path, key))
                msg = f"duplicate key '{key}' (first defined at line {first.line})"
                raise refuse("BR004", msg, self.span(event))
            value_event = next(events)
            child = (*path, key)
            self._add(child, kpos, _pos(value_event))
            value = self._string(value_event)
            if value is None:
                out[key] = self.node(value_event, events, child, depth + 1)
            else:
                self.budget -= 1
                out[key] = value
        return out  # pragma: no cover - the parser always closes a mapping

    def _key(self, event: Any, at: Span) -> str:
        kind = type(event).__name__
        if kind in ("SequenceStartEvent", "MappingStartEvent"):
            what = "a list" if kind == "SequenceStartEvent" else "a mapping"
            raise refuse("BR012", f"mapping keys must be strings, not {what} (a complex key)", at)
        if kind == "AliasEvent":
            value = self._alias(event, ())
        elif event.tag is not None and event.tag != _STR:
            raise self._tagged(event.tag, at)
        elif event.tag is None and event.implicit[0]:
            resolved, value = self.scalars.plain(event.value, at)
            if resolved == _MERGE:
                raise refuse(
                    "BR011",
                    "YAML merge keys ('<<') are not supported in rule files",
                    at,
                    hint="write the keys out, or share them with 'extends'",
                )
        else:
            value = event.value
        if not isinstance(value, str):
            what = describe(value)
            hint = "quote the key" if what in ("a number", "a boolean", "null", "a date") else None
            raise refuse("BR012", f"mapping keys must be strings, not {what}", at, hint=hint)
        return _text(value, at)
