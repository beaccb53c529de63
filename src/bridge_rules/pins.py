"""Pinned tool-input schemas: the tool surface of one agent version, found on a search path.

A pin is written ``<product>@<version>`` (``claude-code@2.1.330``, ``pi@0.73.1``).
Pins are data users make (``bridge-rules pin capture``), so they are looked up, in
order, in the ``--pins`` directories, the ``BRIDGE_RULES_PINS`` directories, the
nearest ``.bridge-rules/pins/`` above the current directory, the user's data
directory, and last the packaged ``schemas/``. In a directory a pin is either
``<product>@<version>.json`` or ``<product>/<version>.json``. The first hit wins, so
a project can fix a packaged pin by capturing the same version again.

The file format is documented in ``docs/pins.md`` and ``schemas/pin.schema.json``;
the older packaged layouts (d.ts pins, pi's ``parameters``) are read as well.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import hashlib
import json
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bridge_rules.resources import display_root, schemas_dir

FORMAT = "bridge-rules-pin/1"
ENV_VAR = "BRIDGE_RULES_PINS"
PROJECT_DIR = Path(".bridge-rules") / "pins"
_SPEC = re.compile(r"^(?P<product>[a-z][a-z0-9-]*)@(?P<version>[0-9][0-9A-Za-z.+-]*)$")


@dataclass(frozen=True)
class Pin:
    product: str
    version: str
    tools: dict[str, dict[str, Any]]
    aliases: dict[str, list[str]] = field(default_factory=dict)
    wildcards: dict[str, dict[str, Any]] = field(default_factory=dict)
    interfaces: dict[str, str] = field(default_factory=dict)
    descriptions: dict[str, str] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None
    origin: str = "packaged"
    declared_only: frozenset[str] = frozenset()
    """Tools only the agent's type declarations list: no runtime capture of this version
    saw the binary send them (a gated or internal feature)."""

    @property
    def spec(self) -> str:
        return f"{self.product}@{self.version}"

    @property
    def location(self) -> str:
        """The pin file as diagnostics show it: packaged pins relative to the package."""
        if self.path is None:
            return f"{self.spec}.json"
        if self.origin == "packaged":
            with contextlib.suppress(ValueError):
                return str(self.path.resolve().relative_to(display_root()))
        return str(self.path)

    def has_tool(self, name: str) -> bool:
        return name in self.tools

    def canonical_names(self, include_declared: bool = False) -> list[str]:
        """The names a canonical stage takes from this pin (``from_pin``), in pin order:
        what the binary sends, and with ``include_declared`` the declared-only ones too."""
        if include_declared:
            return list(self.tools)
        return [name for name in self.tools if name not in self.declared_only]

    def schema(self, name: str) -> dict[str, Any] | None:
        if name in self.tools:
            return self.tools[name]
        if name.startswith("mcp__"):
            return self.wildcards.get("mcp__*")
        return None


class PinError(ValueError):
    """A pin that cannot be named, found or read; ``hint`` says what to do about it."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint

    def describe(self) -> str:
        """The message and the hint, for one line on stderr."""
        return f"{self}; {self.hint}" if self.hint else str(self)


@dataclass(frozen=True)
class PinDir:
    """One directory of the search path and why it is on it."""

    path: Path
    origin: str  # --pins, BRIDGE_RULES_PINS, project, user, packaged


# The CLI's --pins, kept in the environment so that the proxy's worker processes see them.
_CLI_VAR = "BRIDGE_RULES_PINS_CLI"


def use_dirs(dirs: Sequence[str | Path]) -> None:
    """Put ``dirs`` (the CLI's ``--pins``) at the front of the search path; ``[]`` clears it."""
    if dirs:
        os.environ[_CLI_VAR] = os.pathsep.join(str(d) for d in dirs)
    else:
        os.environ.pop(_CLI_VAR, None)


def _dirs_from(variable: str) -> list[Path]:
    return [Path(d) for d in os.environ.get(variable, "").split(os.pathsep) if d]


def parse_spec(spec: str) -> tuple[str, str]:
    match = _SPEC.match(spec)
    if not match:
        raise PinError(
            f"'{spec}' is not a pin; write it as <product>@<version>, e.g. claude-code@2.1.330"
        )
    return match["product"], match["version"]


def _project_dir(cwd: Path) -> Path | None:
    for directory in (cwd, *cwd.parents):
        candidate = directory / PROJECT_DIR
        if candidate.is_dir():
            return candidate
    return None


def user_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "bridge-rules" / "pins"


def search_path(cwd: Path | None = None) -> list[PinDir]:
    """Where pins are looked for, first hit first."""
    dirs = [PinDir(d, "--pins") for d in _dirs_from(_CLI_VAR)]
    dirs += [PinDir(d, ENV_VAR) for d in _dirs_from(ENV_VAR)]
    project = _project_dir((cwd or Path.cwd()).resolve())
    if project is not None:
        dirs.append(PinDir(project, "project"))
    dirs.append(PinDir(user_dir(), "user"))
    dirs.append(PinDir(schemas_dir(), "packaged"))
    return dirs


def _candidates(directory: Path, product: str, version: str) -> tuple[Path, Path]:
    return directory / f"{product}@{version}.json", directory / product / f"{version}.json"


def entries(directory: Path) -> Iterator[tuple[str, Path]]:
    """Every ``(spec, file)`` in one directory of the search path."""
    if not directory.is_dir():
        return
    for path in sorted(directory.glob("*@*.json")):
        if _SPEC.match(path.stem):
            yield path.stem, path
    for path in sorted(directory.glob("*/*.json")):
        spec = f"{path.parent.name}@{path.stem}"
        if _SPEC.match(spec):
            yield spec, path


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else -1 for p in re.split(r"[.+-]", version))


def available(product: str) -> list[str]:
    """Versions pinned for a product anywhere on the search path, oldest first."""
    versions = {
        spec.split("@", 1)[1]
        for d in search_path()
        for spec, _ in entries(d.path)
        if spec.split("@", 1)[0] == product
    }
    return sorted(versions, key=_version_key)


def locate(spec: str) -> tuple[Path, PinDir] | None:
    product, version = parse_spec(spec)
    for directory in search_path():
        for candidate in _candidates(directory.path, product, version):
            if candidate.is_file():
                return candidate, directory
    return None


def _not_found(spec: str, product: str, version: str) -> PinError:
    looked = ", ".join(f"{d.path} ({d.origin})" for d in search_path())
    versions = available(product)
    known = [f"{product}@{v}" for v in versions]
    if versions:  # a near version of the same product: 2.1.33 -> 2.1.330 (the oldest on a tie)
        scored = [(difflib.SequenceMatcher(None, version, v).ratio(), v) for v in versions]
        best = max((score for score, _ in scored), default=0.0)
        close = [f"{product}@{v}" for score, v in scored if score == best and score >= 0.6][:1]
    else:  # a near product name (claud-code for claude-code)
        specs = {s.split("@", 1)[0]: s for d in search_path() for s, _ in entries(d.path)}
        near = difflib.get_close_matches(product, sorted(specs), n=1, cutoff=0.8)
        close = [f"{near[0]}@{version}"] if near else []
    hint = f"did you mean '{close[0]}'? " if close else ""
    hint += f"capture it with: bridge-rules pin capture {spec} -- <agent command>"
    message = f"unknown pin '{spec}' (available: {', '.join(known) or 'none'}; looked in {looked})"
    return PinError(message, hint)


def load_pin(spec: str) -> Pin:
    """The first pin named ``spec`` on the search path; :class:`PinError` if none or unreadable."""
    product, version = parse_spec(spec)
    found = locate(spec)
    if found is None:
        raise _not_found(spec, product, version)
    path, directory = found
    stat = path.stat()
    return _read(path, stat.st_mtime_ns, stat.st_size, product, version, directory.origin)


def load_file(path: Path, spec: str | None = None) -> Pin:
    """A pin read straight from a file (``pin show FILE``); the spec defaults to its name."""
    if spec is None:
        spec = _spec_of(path)
    product, version = parse_spec(spec)
    stat = path.stat()
    return _read(path, stat.st_mtime_ns, stat.st_size, product, version, "file")


def _spec_of(path: Path) -> str:
    """The spec a pin file declares (``name``, ``version``), else the one its path spells."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        raw = None
    if isinstance(raw, dict) and isinstance(raw.get("name"), str) and raw.get("version"):
        return f"{raw['name']}@{raw['version']}"
    for spec in (path.stem, f"{path.parent.name}@{path.stem}"):
        if _SPEC.match(spec):
            return spec
    raise PinError(f"cannot tell which pin {path} is: name it <product>@<version>.json")


@functools.lru_cache(maxsize=64)
def _read(path: Path, _mtime: int, _size: int, product: str, version: str, origin: str) -> Pin:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise PinError(f"cannot read pin file {path}: {exc}") from None
    problems = check_document(raw)
    if problems:
        raise PinError(f"pin file {path} is not valid: {problems[0]}")
    tools, descriptions = _tools(raw)
    descriptions = {**raw.get("descriptions", {}), **descriptions}
    return Pin(
        product=product,
        version=version,
        tools=tools,
        aliases=raw.get("aliases", {}),
        wildcards=raw.get("wildcard_tools", {}),
        interfaces={k: v for k, v in raw.get("interfaces", {}).items() if isinstance(v, str)},
        descriptions=descriptions,
        provenance=raw.get("provenance") or _legacy_provenance(raw),
        path=path,
        origin=origin,
        declared_only=frozenset(raw.get("declared_only", ())),
    )


def _legacy_provenance(raw: dict[str, Any]) -> dict[str, Any]:
    """The provenance a pin written by ``scripts/pin_from_request.py`` keeps at its top level."""
    if raw.get("method") != "runtime":
        return {}
    return {
        "method": "runtime-capture",
        "agent": raw.get("agent"),
        "version": raw.get("version"),
        "date": raw.get("captured"),
        "sha256": raw.get("tools_sha256"),
        "sources": [{"method": "runtime-capture", "user_agent": raw.get("user_agent", "")}],
    }


def _tools(raw: dict[str, Any]) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """Name -> input schema, and name -> description, from any of the pin layouts."""
    listed = raw.get("tools", {})
    if isinstance(listed, list):  # pi's layout: a list of tools with their parameters
        listed = {t["name"]: t for t in listed}
    schemas: dict[str, dict[str, Any]] = {}
    descriptions: dict[str, str] = {}
    for name, entry in listed.items():
        if "input_schema" in entry:  # this format
            schemas[name] = entry["input_schema"]
        elif "parameters" in entry:  # pi's layout
            schemas[name] = entry["parameters"]
        else:  # the d.ts layout: the schema itself
            schemas[name] = entry
        if isinstance(entry.get("description"), str) and entry is not schemas[name]:
            descriptions[name] = entry["description"]
    return schemas, descriptions


def check_document(raw: Any) -> list[str]:
    """Problems with a pin document, as ``where: what`` strings (empty when it is valid).

    The same rules as ``schemas/pin.schema.json``, checked without a JSON Schema library
    so that reading a pin needs no extra dependency.
    """
    if not isinstance(raw, dict):
        return ["the document is not a JSON object"]
    tools = raw.get("tools")
    if isinstance(tools, list):
        if not all(isinstance(t, dict) and isinstance(t.get("name"), str) for t in tools):
            return ["tools: every entry of a tool list needs a 'name'"]
        tools = {t["name"]: t for t in tools}
    if not isinstance(tools, dict):
        return ["tools: missing, or not an object of tools by name"]
    problems: list[str] = []
    if raw.get("format") == FORMAT:
        for key in ("name", "version", "provenance"):
            if key not in raw:
                problems.append(f"{key}: required in a {FORMAT} document")
        for name, entry in tools.items():
            if not isinstance(entry, dict) or not isinstance(entry.get("input_schema"), dict):
                problems.append(f"tools.{name}: needs an 'input_schema' object")
    elif "format" in raw:
        problems.append(f"format: '{raw['format']}' is not a known pin format ({FORMAT})")
    for name, entry in tools.items():
        if not isinstance(entry, dict):
            problems.append(f"tools.{name}: not an object")
    declared = raw.get("declared_only", [])
    if not isinstance(declared, list) or not all(isinstance(n, str) for n in declared):
        problems.append("declared_only: not a list of tool names")
    else:
        unknown = [n for n in declared if n not in tools]
        problems += [f"declared_only: '{n}' is not one of the tools" for n in unknown]
    return problems


def tools_digest(tools: dict[str, Any]) -> str:
    """sha256 of the tool content, independent of key order and whitespace."""
    text = json.dumps(tools, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
