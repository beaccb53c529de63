"""The language server's view of a project: which rule sets ``lint`` would check, the
editor's unsaved buffers, and the last analysis of each rule set.

Nothing here parses or checks rules itself: every rule set goes through
:func:`bridge_rules.lint.analysis.analyse`, the function ``bridge-rules lint`` and
``bridge_rules.load()`` call, with the open buffers read in place of the files on disk
(:func:`bridge_rules.loader.buffers`). So a diagnostic in the editor is a line of ``lint``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from bridge_rules.diagnostics import Diagnostic, sort_diagnostics
from bridge_rules.lint.analysis import Analysis, analyse
from bridge_rules.lint.discover import DiscoveryError, discover
from bridge_rules.loader import buffers
from bridge_rules.resources import display_root

Target = str | list[str]
DISCOVERY = ""
"""The key of discovery's own findings among the rule sets' (no file is named ``""``)."""


def absolute(shown: str) -> str:
    """A file as diagnostics and traces show it, back to a path on disk: relative to the
    project (the server's working directory), or a packaged file relative to the package."""
    if os.path.isabs(shown):
        return shown
    here = os.path.abspath(shown)
    if os.path.exists(here):
        return here
    return str(display_root() / shown)


def is_rule_text(text: str) -> bool:
    """Whether a buffer is a rule file: its first key is ``bridge-rules:``, as discovery asks
    of the YAML under ``rules/`` (comments and a modeline may come first)."""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith(("#", "---")):
            return stripped.startswith("bridge-rules:")
    return False


@dataclass
class Workspace:
    """One project root; paths are absolute, as the editor's URIs name them."""

    root: Path
    texts: dict[str, str] = field(default_factory=dict)
    """Open buffers by absolute path: what the editor shows, saved or not."""
    last: dict[str, Analysis] = field(default_factory=dict)
    """The latest analysis of each rule set (keyed by its target's first file)."""
    good: dict[str, Analysis] = field(default_factory=dict)
    """The latest analysis that compiled: hover, definition and completion keep using it
    while the file is broken mid-edit."""
    deps: dict[str, set[str]] = field(default_factory=dict)
    """Every file each rule set read (its listed files and what they extend), absolute."""
    found: dict[str, dict[str, list[Diagnostic]]] = field(default_factory=dict)
    """Each rule set's latest findings by absolute file: a file's diagnostics are those of
    every rule set that reads it, deduplicated as ``lint`` of the whole project reports them."""
    problem: str | None = None
    """Why ``[tool.bridge-rules]`` could not be used, when it could not."""
    refused: list[Diagnostic] = field(default_factory=list)
    """What discovery would not hand to the loader (a symlink out of the project, BR015),
    reported by ``lint`` with the rule sets' findings and so published with them."""

    def targets(self) -> dict[str, Target]:
        """The rule sets ``lint`` finds in the project (each file alone, or all of them as
        one when ``layered``), plus any open rule file it did not find (as ``lint FILE``)."""
        found: dict[str, Target] = {}
        try:
            discovered = discover(self.root)
            self.problem = None
        except DiscoveryError as exc:
            self.problem = str(exc)
            discovered = None
        self.refused = list(discovered.problems) if discovered is not None else []
        if discovered is not None:
            paths = [os.path.abspath(p) for p in discovered.paths]
            if discovered.layered and paths:
                found[paths[0]] = [self._shown(p) for p in paths]
            else:
                found.update({p: self._shown(p) for p in paths})
        covered = {f for target in found.values() for f in _listed(target)}
        for path, text in self.texts.items():
            if path not in covered and self._shown(path) not in covered and is_rule_text(text):
                found[path] = self._shown(path)
        return found

    def shown_name(self, path: str) -> str:
        """``path`` as a finding in it names its file (relative to the project root)."""
        return self._shown(path)

    def _shown(self, path: str) -> str:
        """A path as ``lint`` run at the project root names it on its command line."""
        try:
            return os.path.relpath(path, self.root) if path.startswith(str(self.root)) else path
        except ValueError:
            return path

    def affected(self, path: str, current: dict[str, Target]) -> dict[str, Target]:
        """The rule sets to check again after ``path`` changed: every one that lists it
        (a file alone, or any layer of a layered set, as listed now: a layer may be new) or
        read it through ``extends``, as their last analysis recorded."""
        return {
            key: target
            for key, target in current.items()
            if path in self.listed(key, target) or path in self.deps.get(key, ())
        }

    def forget(self, current: dict[str, Target]) -> set[str]:
        """Drop the rule sets that are gone (an undiscovered file closed, a layer removed);
        the files they had findings in, to publish again without them."""
        files: set[str] = set()
        for key in set(self.found) - set(current) - {DISCOVERY}:
            files |= set(self.found.pop(key))
            for table in (self.deps, self.good, self.last):
                table.pop(key, None)
        return files

    def listed(self, key: str, target: Target) -> set[str]:
        """The files a rule set names itself, absolute: each gets its diagnostics published,
        an empty list included, so that an editor that opened any of them hears back."""
        return {key} | {os.path.normpath(self.root / shown) for shown in _listed(target)}

    def check(self, path: str | None) -> dict[str, list[Diagnostic]]:
        """Analyse what ``path`` affects (None: every rule set); the findings of each file
        those rule sets touch (now or at their previous check), by absolute path, an empty
        list where none."""
        current = self.targets()
        touched = self.forget(current)
        chosen = current if path is None else self.affected(path, current)
        for key, target in chosen.items():
            analysis = self.analyse(target)
            self.last[key] = analysis
            listed = self.listed(key, target)
            if analysis.runtime is not None:
                self.good[key] = analysis
                self.deps[key] = listed | {
                    self.on_disk(f.doc.path) for f in analysis.runtime.rules.files
                }
            else:
                self.deps[key] = self.deps.get(key, set()) | listed
            by_file: dict[str, list[Diagnostic]] = {}
            for diag in analysis.diagnostics:
                by_file.setdefault(self.on_disk(diag.span.file), []).append(diag)
            touched |= listed | set(self.found.get(key, {})) | set(by_file)
            self.found[key] = by_file
        refused: dict[str, list[Diagnostic]] = {}
        for diag in self.refused:
            refused.setdefault(self.on_disk(diag.span.file), []).append(diag)
        touched |= set(self.found.get(DISCOVERY, {})) | set(refused)
        self.found[DISCOVERY] = refused
        return {
            file: sort_diagnostics(d for found in self.found.values() for d in found.get(file, ()))
            for file in touched
        }

    def on_disk(self, shown: str) -> str:
        """A file as a finding names it (relative to the project root, where the analysis
        runs), back to an absolute path."""
        if os.path.isabs(shown):
            return shown
        here = os.path.normpath(self.root / shown)
        return here if os.path.exists(here) else absolute(shown)

    def analyse(self, target: Target) -> Analysis:
        """``lint``'s analysis of one rule set, run at the project root over the buffers."""
        here = os.getcwd()
        os.chdir(self.root)
        try:
            with buffers(dict(self.texts)):
                return analyse(target)
        finally:
            os.chdir(here)

    def analysis_for(self, path: str) -> Analysis | None:
        """The last compiled analysis of a rule set that reads ``path`` (its own first)."""
        if path in self.good:
            return self.good[path]
        return next((a for k, a in self.good.items() if path in self.deps.get(k, ())), None)


def _listed(target: Target) -> list[str]:
    return [target] if isinstance(target, str) else list(target)
