"""``serve --config FILE``, read: option values as ``serve`` takes them, where each was
written, and what is wrong with the file, with the rule files' safe, size-limited YAML
reader. Standard library only until a file is read (as :mod:`bridge_rules.proxy.config`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bridge_rules.proxy.config import Problem, SettingProblem
from bridge_rules.proxy.routespec import RouteSpec, model_places, parse_routes, route_places
from bridge_rules.proxy.settings import ALIASES, BY_NAME, SETTINGS, file_value

if TYPE_CHECKING:
    from bridge_rules.source import Span


@dataclass(frozen=True)
class SettingsFile:
    """``--config FILE``, read: option values by parameter name, where each was written,
    and what is wrong with the file."""

    values: dict[str, Any] = field(default_factory=dict)
    where: dict[str, str] = field(default_factory=dict)
    problems: tuple[Problem, ...] = ()
    routes: tuple[RouteSpec, ...] = ()
    """``routes:``, which only a file can set (docs/proxy.md#routes)."""
    route_models: dict[str, Span] = field(default_factory=dict)
    """Route name -> where its ``model:`` is written (BR322)."""
    read: bool = True
    """False when the file could not be read as a mapping at all: its problems are then the
    only ones worth reporting. Otherwise ``serve`` reports them with every problem of the
    values it ends up with, all in one run."""


# Two of the YAML reader's whole-file problems are worded for rule files: a settings file
# says its own (None: an empty file, or only comments, sets nothing).
_WHOLE_FILE = {
    "BR005": None,
    "BR006": "must be a mapping of option names to values (upstream: URL)",
}


def read_settings(path: str, options: Mapping[str, bool] | None = None) -> SettingsFile:
    """The option values ``path`` sets, read with the rule files' safe, size-limited YAML
    reader. ``options`` maps each option's parameter name to whether it repeats (default:
    the declared settings, proxy/settings.py); a key may be written ``max-body-bytes`` or
    ``max_body_bytes``. A declared setting's value must have its type."""
    if options is None:
        options = {s.name: s.repeat for s in SETTINGS}
    from pathlib import Path

    from bridge_rules.diagnostics import Severity, did_you_mean
    from bridge_rules.loader import read_file

    whole = f"--config {path}"
    if not os.path.exists(path):
        return SettingsFile(problems=(SettingProblem("no such file", whole),), read=False)
    doc, diags = read_file(Path(path))
    if doc is None:
        errors = [d for d in diags if d.severity is Severity.ERROR]
        own = [_WHOLE_FILE[d.code] for d in errors if d.code in _WHOLE_FILE]
        if own:
            message = own[0]
            said = (SettingProblem(message, whole),) if message else ()
            return SettingsFile(problems=said, read=not message)
        return SettingsFile(problems=tuple(errors), read=False)
    known = sorted(name.replace("_", "-") for name in options)
    values: dict[str, Any] = {}
    where: dict[str, str] = {}
    problems: list[Problem] = []
    routes: tuple[RouteSpec, ...] = ()
    route_models: dict[str, Span] = {}
    for key, setting in doc.data.items():
        name = str(key).replace("-", "_")
        name = ALIASES.get(name, name)
        if name == "routes":
            routes, found = parse_routes(setting, doc.source_map, key)
            problems += [SettingProblem(message, at) for message, at in found]
            where.update(route_places(setting, doc.source_map, key))
            route_models = model_places(setting, doc.source_map, key)
            continue
        if name not in options:
            hint = did_you_mean(str(key), known) or f"known: {', '.join(known)}"
            at = f"--config {doc.source_map.key_span((key,))}"
            problems.append(SettingProblem(f"unknown option '{key}'; {hint}", at))
            continue
        at = f"--config {doc.source_map.value_span((key,))}"
        declared = BY_NAME.get(name)
        if declared is not None:
            value, wrong = file_value(declared, setting, str(key))
        else:
            value, wrong = _value(setting, options[name], str(key))
        if wrong is not None:
            problems.append(SettingProblem(wrong, at))
            continue
        values[name], where[name] = value, at
    return SettingsFile(values, where, tuple(problems), routes, route_models)


def _value(setting: Any, multiple: bool, key: str) -> tuple[Any, str | None]:
    """A value from the file as the option takes it: a scalar, or for a repeatable option
    (``rules``) a scalar or a list of them; ``None`` for any other shape, so it is refused
    here and never becomes a TypeError later."""
    scalar = (str, int, float, bool)
    if isinstance(setting, scalar):
        return ([setting] if multiple else setting), None
    if multiple and isinstance(setting, list) and all(isinstance(v, scalar) for v in setting):
        return setting, None
    shape = "a list of values" if multiple else "one value"
    return None, f"'{key}' takes {shape}, got {type(setting).__name__}"
