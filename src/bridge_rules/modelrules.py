"""The ``models:`` section compiled: every setting with the glob and the place that wrote it.

A request's model is matched against the entries in the order they were written (files in
load order, then keys in file order); for each decision the last matching entry that sets it
wins, so a later file or a route's own rules overlay an earlier entry field by field. What
decided is kept with the value, so ``explain --model`` and a refused request can name the
rule and its line.
"""

from __future__ import annotations

import fnmatch
import functools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from bridge_rules.source import Span

FIELDS = (
    "tool_choice.forced",
    "thinking.foreign",
    "thinking.unknown",
    "thinking.disabled",
    "system_in_messages",
)
"""Every model-level decision, as ``section.field`` (how docs, sources and explain name it)."""

DEFAULTS: dict[str, Any] = dict.fromkeys(FIELDS, "keep")
"""What applies when no entry decides: the request passes as the client wrote it."""


@dataclass(frozen=True)
class Setting:
    """One field of one entry, as written."""

    glob: str
    field: str
    value: Any
    span: Span


@dataclass(frozen=True)
class Decision:
    """What applies to one model for one field, and the setting that decided (None: default)."""

    field: str
    value: Any
    setting: Setting | None = None

    @property
    def where(self) -> str:
        if self.setting is None:
            return "default (no models: entry sets it)"
        return f"models[{self.setting.glob!r}] at {self.setting.span}"


@dataclass(frozen=True)
class ListedModel:
    """A model ``GET /v1/models`` lists: an exact id with a display name."""

    id: str
    display_name: str
    created_at: str
    capabilities: Any = None


@dataclass(frozen=True)
class ModelTable:
    """Every ``models:`` setting in overlay order, and the models named exactly."""

    settings: tuple[Setting, ...] = ()
    listed: tuple[ListedModel, ...] = ()
    _memo: dict[str, dict[str, Decision]] = field(
        default_factory=dict, compare=False, repr=False, hash=False
    )

    @property
    def active(self) -> bool:
        """Whether any entry decides something other than passing the request on."""
        return any(s.value != "keep" for s in self.settings)

    @property
    def marks(self) -> bool:
        """Whether answers' thinking blocks are marked with their model (an entry says what
        to do with another model's blocks, so the way out must be able to tell)."""
        return any(s.field == "thinking.foreign" for s in self.settings)

    def decide(self, model: str | None) -> dict[str, Decision]:
        """Every decision for ``model`` (memoised; the table only gains whole entries)."""
        key = model or ""
        known = self._memo.get(key)
        if known is not None:
            return known
        out = {name: Decision(name, DEFAULTS[name]) for name in FIELDS}
        if model:
            for setting in self.settings:
                if matches(setting.glob, model):
                    out[setting.field] = Decision(setting.field, setting.value, setting)
        if len(self._memo) < 4096:
            self._memo[key] = out
        return out

    def globs(self) -> Iterator[tuple[str, Span]]:
        seen: set[str] = set()
        for setting in self.settings:
            if setting.glob not in seen:
                seen.add(setting.glob)
                yield setting.glob, setting.span


@functools.lru_cache(maxsize=4096)
def matches(glob: str, model: str) -> bool:
    """A glob matches a model id case-sensitively (ids are lower-case on the wire)."""
    return fnmatch.fnmatchcase(model, glob)


def is_exact(glob: str) -> bool:
    return not any(ch in glob for ch in "*?[")


NO_MODELS = ModelTable()
