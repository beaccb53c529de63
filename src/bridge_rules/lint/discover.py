"""Which rule files ``bridge-rules lint`` checks when it is given no paths.

Like ruff and yamllint, a bare ``lint`` checks the project it runs in. ``[tool.bridge-rules]``
in ``pyproject.toml`` decides when it has a ``rules`` list (paths or globs, relative to the
pyproject file; ``layered = true`` checks them as one composed rule set); otherwise the
conventional places are searched under the directory:

- ``bridge-rules.yaml`` and ``*.bridge-rules.yaml``;
- ``.bridge-rules/**/*.yaml``;
- ``rules/**/*.yaml``

(``.yml`` too). The pre-commit hook (``.pre-commit-hooks.yaml``) runs a bare ``lint`` when
any file matching these patterns, or ``pyproject.toml``, changes, so the hook and the
command check the same files. Nothing here prints or exits.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

PATTERNS = (
    "bridge-rules.yaml",
    "bridge-rules.yml",
    "*.bridge-rules.yaml",
    "*.bridge-rules.yml",
    ".bridge-rules/**/*.yaml",
    ".bridge-rules/**/*.yml",
    "rules/**/*.yaml",
    "rules/**/*.yml",
)
WHERE = "bridge-rules.yaml, *.bridge-rules.yaml, .bridge-rules/*.yaml, rules/*.yaml"


class DiscoveryError(ValueError):
    """``[tool.bridge-rules]`` is there but unusable; the message says where and why."""


@dataclass(frozen=True)
class Discovered:
    paths: list[Path]
    layered: bool = False
    source: str = "conventional paths"  # or "pyproject.toml [tool.bridge-rules]"


def _pyproject_settings(directory: Path) -> dict[str, object] | None:
    pyproject = directory / "pyproject.toml"
    if not pyproject.is_file():
        return None
    try:
        doc = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise DiscoveryError(f"{pyproject.name}: cannot read: {exc}") from None
    settings = doc.get("tool", {}).get("bridge-rules")
    if settings is None:
        return None
    if not isinstance(settings, dict):
        raise DiscoveryError("pyproject.toml: [tool.bridge-rules] must be a table")
    unknown = sorted(set(settings) - {"rules", "layered"})
    if unknown:
        raise DiscoveryError(
            f"pyproject.toml: unknown key {unknown[0]!r} in [tool.bridge-rules] "
            "(known: rules, layered)"
        )
    return settings


def _expand(directory: Path, entries: list[str]) -> list[Path]:
    found: list[Path] = []
    for entry in entries:
        if any(ch in entry for ch in "*?["):
            found.extend(sorted(p for p in directory.glob(entry) if p.is_file()))
        else:
            found.append(directory / entry)
    return found


def discover(directory: Path) -> Discovered:
    """The rule files to lint under ``directory`` (empty when there are none)."""
    settings = _pyproject_settings(directory)
    if settings is not None and "rules" in settings:
        entries = settings["rules"]
        if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
            raise DiscoveryError(
                "pyproject.toml: [tool.bridge-rules] rules must be a list of paths or globs"
            )
        layered = settings.get("layered", False)
        if not isinstance(layered, bool):
            raise DiscoveryError("pyproject.toml: [tool.bridge-rules] layered must be true/false")
        return Discovered(
            _dedupe(_expand(directory, entries)), layered, "pyproject.toml [tool.bridge-rules]"
        )
    found = [p for pattern in PATTERNS for p in sorted(directory.glob(pattern)) if p.is_file()]
    return Discovered(_dedupe(found))


def expand_directory(path: Path) -> list[Path]:
    """A directory given on the command line: its rule files, recursively, in name order."""
    return sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in (".yaml", ".yml"))


def _dedupe(paths: list[Path]) -> list[Path]:
    seen: set[Path] = set()
    out = []
    for path in paths:
        key = path.resolve()
        if key not in seen:
            seen.add(key)
            out.append(path)
    return out
