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
from collections.abc import Iterator
from typing import Any

from bridge_rules.loader.scalars import (
    _CORE,
    _STR,
    MAX_INT,
    Refused,
    _checked,
    _text,
    refuse,
    scalars,
)
from bridge_rules.source import DocPath, SourceMap, Span, escape

__all__ = ["MAX_INT", "Refused", "TooLarge", "refuse", "scalars"]

# Rule files nest about six levels; a default value may hold some JSON.
MAX_DEPTH = 64

_MERGE = _CORE + "merge"
_COLLECTION_TAGS = frozenset({_CORE + "map", _CORE + "seq"})


class TooLarge(Exception):
    """Aliases expand the document past the node budget."""


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
