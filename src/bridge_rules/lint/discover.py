"""Which rule files ``bridge-rules lint`` checks when it is given no paths.

Like ruff, a bare ``lint`` checks the project it runs in: it walks up from the current
directory to the project root (the nearest folder holding ``pyproject.toml`` or ``.git``).
``[tool.bridge-rules]`` in that ``pyproject.toml`` decides when it has a ``rules`` list
(paths or globs, relative to the pyproject file; ``layered = true`` checks them as one
composed rule set); otherwise the conventional places under the root are searched:

- ``bridge-rules.yaml`` and ``*.bridge-rules.yaml``;
- ``.bridge-rules/**/*.yaml``;
- ``rules/**/*.yaml`` whose text starts with ``bridge-rules:`` (other YAML under
  ``rules/``, a CI or k8s file, is skipped, and ``lint -v`` says so)

(``.yml`` too). The walk never follows a symlinked directory, and a symlink that leads out
of the project is refused with a located error (BR015) rather than read; a FIFO, device or
socket with a rule file's name is listed so that the loader refuses it by name. The
pre-commit hook (``.pre-commit-hooks.yaml``) runs a bare ``lint`` when any file matching
these names, or ``pyproject.toml``, changes. Nothing here prints or exits.
"""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path

from bridge_rules.diagnostics import Diagnostic, error
from bridge_rules.outside import (
    ALLOW_OUTSIDE_ENV,
    allow_outside_default,
    kernel_filesystem,
    leaves,
    project_root,
)
from bridge_rules.source import Span, escape

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

SUFFIXES = (".yaml", ".yml")
NAMED = ("bridge-rules.yaml", "bridge-rules.yml")
WHERE = (
    "bridge-rules.yaml, *.bridge-rules.yaml, .bridge-rules/**/*.yaml, rules/**/*.yaml starting "
    "with 'bridge-rules:'"
)
SNIFF_BYTES = 4096
"""How much of a YAML file under ``rules/`` is read to see whether it is a rule file."""


class DiscoveryError(ValueError):
    """``[tool.bridge-rules]`` is there but unusable; the message says where and why."""


@dataclass(frozen=True)
class Discovered:
    paths: list[Path]
    layered: bool = False
    source: str = "conventional paths"  # or "pyproject.toml [tool.bridge-rules]"
    skipped: list[Path] = field(default_factory=list)
    """YAML files under ``rules/`` that are not rule files (``lint -v`` names them)."""
    problems: list[Diagnostic] = field(default_factory=list)
    """Symlinks that lead out of the project (BR015), located at the link."""


def _pyproject_settings(root: Path) -> dict[str, object] | None:
    pyproject = root / "pyproject.toml"
    if not pyproject.is_file():
        return None
    try:
        doc = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise DiscoveryError(f"{_shown(pyproject)}: cannot read: {exc}") from None
    except RecursionError:
        raise DiscoveryError(f"{_shown(pyproject)}: cannot read: nested too deeply") from None
    tool = doc.get("tool", {})
    settings = tool.get("bridge-rules") if isinstance(tool, dict) else None
    if settings is None:
        return None
    if not isinstance(settings, dict):
        raise DiscoveryError("pyproject.toml: [tool.bridge-rules] must be a table")
    unknown = sorted(set(settings) - {"rules", "layered"})
    if unknown:
        raise DiscoveryError(
            f"pyproject.toml: unknown key {escape(unknown[0])!r} in [tool.bridge-rules] "
            "(known: rules, layered)"
        )
    return settings


def _expand(root: Path, entries: list[str]) -> list[Path]:
    found: list[Path] = []
    for entry in entries:
        if not entry or os.path.isabs(entry) or entry.startswith("~"):
            raise DiscoveryError(
                f"pyproject.toml: [tool.bridge-rules] rules: {escape(entry)!r} is not a path "
                "relative to pyproject.toml"
            )
        if any(ch in entry for ch in "*?["):
            try:
                matches = sorted(root.glob(entry))
            except (ValueError, NotImplementedError, OSError) as exc:
                raise DiscoveryError(
                    f"pyproject.toml: [tool.bridge-rules] rules: bad glob {escape(entry)!r}: {exc}"
                ) from None
            found.extend(p for p in matches if not p.is_dir())
        else:
            found.append(root / entry)
    return found


def discover(start: Path) -> Discovered:
    """The rule files of the project that holds ``start`` (empty when there are none)."""
    root = project_root(start)
    settings = _pyproject_settings(root)
    if settings is not None and "rules" in settings:
        entries = settings["rules"]
        if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
            raise DiscoveryError(
                "pyproject.toml: [tool.bridge-rules] rules must be a list of paths or globs"
            )
        layered = settings.get("layered", False)
        if not isinstance(layered, bool):
            raise DiscoveryError("pyproject.toml: [tool.bridge-rules] layered must be true/false")
        kept, problems = _inside(root, _expand(root, entries))
        return Discovered(
            _dedupe(kept), layered, "pyproject.toml [tool.bridge-rules]", problems=problems
        )
    named = [
        p
        for p in sorted(root.iterdir())
        if (p.name in NAMED or p.name.endswith(tuple(".bridge-rules" + s for s in SUFFIXES)))
        and not p.is_dir()
    ]
    found = named + _walk(root / ".bridge-rules", root)
    skipped: list[Path] = []
    for path in _walk(root / "rules", root):
        (found if _is_rule_file(path) else skipped).append(path)
    kept, problems = _inside(root, found)
    shown = [Path(_shown(path, root)) for path in skipped]
    return Discovered(_dedupe(kept), skipped=shown, problems=problems)


def expand_directory(path: Path) -> list[Path]:
    """A directory given on the command line: its rule files, recursively, in name order;
    a symlink to a directory out of the project is kept whole, for the loader to refuse."""
    if os.path.islink(path) and leaves(path, project_root(path.parent)):
        return [path]
    if _kernel(path):
        return [path]
    return _walk(path, project_root(path))


def _walk(directory: Path, root: Path) -> list[Path]:
    """Every ``*.yaml``/``*.yml`` entry under ``directory`` that is not a directory, in name
    order, without following symlinked directories (which may loop); one that leads out of
    ``root`` is listed, so that it is refused by name."""
    if not directory.is_dir():
        return []
    found: list[Path] = []
    for top, dirs, files in os.walk(directory, followlinks=False):
        found.extend(Path(top, name) for name in files if name.endswith(SUFFIXES))
        kept = []
        for name in sorted(dirs):
            inner = Path(top, name)
            if os.path.islink(inner) and leaves(inner, root):
                found.append(inner)
            elif _kernel(inner):  # a mount of /proc or /sys inside the project: never walked
                found.append(inner)
                continue
            kept.append(name)
        dirs[:] = kept
    return sorted(found)


def _kernel(path: Path) -> bool:
    """Whether ``path`` lies on a kernel filesystem (``/proc``, ``/sys``), whose entries
    are interfaces, not rule files, and may block or be consumed when read."""
    try:
        return kernel_filesystem(path, os.stat(path).st_dev) is not None
    except (OSError, ValueError):
        return False


def _is_rule_file(path: Path) -> bool:
    """Whether a YAML file under ``rules/`` is a rule file: its first line that is not blank,
    a comment or a document marker starts with ``bridge-rules:``. Anything that is not a
    regular file counts, so that the loader refuses it by name instead of it being skipped."""
    try:
        found = os.stat(path)
        if not stat.S_ISREG(found.st_mode) or kernel_filesystem(path, found.st_dev):
            return True
        with open(path, "rb") as handle:
            head = handle.read(SNIFF_BYTES)
    except OSError:
        return True  # the loader reports why it cannot be read
    for raw in head.removeprefix(b"\xef\xbb\xbf").splitlines():
        line = raw.strip()
        if not line or line.startswith((b"#", b"%")) or line == b"---":
            continue
        return line.startswith((b"bridge-rules:", b'"bridge-rules":', b"'bridge-rules':"))
    return False


def _inside(root: Path, paths: list[Path]) -> tuple[list[Path], list[Diagnostic]]:
    """``paths`` shown relative to the current directory, less those a symlink takes out of
    the project (each a BR015 at the link, unless leaving is allowed)."""
    kept: list[Path] = []
    problems: list[Diagnostic] = []
    allowed = allow_outside_default()
    for path in paths:
        shown = Path(_shown(path, root))
        if not allowed and leaves(path, root):
            problems.append(
                error(
                    "BR015",
                    f"'{escape(str(shown))}' leads out of the project ({escape(str(root))}); "
                    "it is not read",
                    Span(escape(str(shown))),
                    hint=f"allow it with --allow-outside or {ALLOW_OUTSIDE_ENV}=1",
                )
            )
        else:
            kept.append(shown)
    return kept, problems


def _shown(path: Path, root: Path | None = None) -> str:
    """``path`` relative to the current directory when that is in the project
    (``../rules/a.yaml`` from a subfolder), else as found."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return str(path)
    if rel.startswith("..") and (root is None or leaves(Path.cwd(), root)):
        return str(path)
    return rel


def _dedupe(paths: list[Path]) -> list[Path]:
    seen: set[str] = set()
    out = []
    for path in paths:
        key = os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            out.append(path)
    return out
