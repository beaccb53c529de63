"""Find, load and layer rule files: profiles by name, ``extends``, directories.

Composition is documented in ``docs/rule-format.md``:

* files are applied in order; a file's ``extends`` targets come before it;
* scalar settings and sections (``pin``, ``gate``, ``inbound``, ...) from a later
  file override the earlier ones field by field;
* ``names`` stages merge by ``id`` (default: the stage's ``kind``, numbered when a
  file repeats a kind): same id and kind -> the later file's table entries and
  settings are laid over the earlier stage, in its place; a new id -> the stage
  is inserted *before* the inherited ones (user rules win); ``enabled: false``
  removes an inherited stage;
* ``bindings`` merge by ``local`` name (a later binding replaces an earlier one);
* ``local_tools`` and ``suppress`` accumulate.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

from bridge_rules.diagnostics import Diagnostic, did_you_mean, error
from bridge_rules.loader import Document, kernel_directory, read_file, rule_files_in
from bridge_rules.model import RuleFile
from bridge_rules.outside import (
    ALLOW_OUTSIDE_ENV,
    allow_outside_default,
    leaves,
    project_root,
)
from bridge_rules.resources import display_root, profile_names, profile_path, rules_dir
from bridge_rules.source import Span, escape
from bridge_rules.validate import validate_document


@dataclass(frozen=True)
class SourcedFile:
    """A validated rule file and the document it came from."""

    rules: RuleFile
    doc: Document


@dataclass
class RuleSource:
    """What a rule set was loaded from: files in application order."""

    files: list[SourcedFile] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    entered: dict[str, tuple[str, Span]] = field(default_factory=dict)
    """Each packaged file a user's file reached through ``extends``, as shown in spans: the
    profile it named and where (that ``extends`` entry), so that a finding inside the
    package can be placed where the user can act (:func:`placed`)."""


def placed(diag: Diagnostic, entered: dict[str, tuple[str, Span]]) -> Diagnostic:
    """A finding in a packaged file the user reached through ``extends``, moved onto that
    ``extends`` line with the profile and its own place in the message; others as they are.
    A user cannot edit a file inside the installed package, only what they wrote."""
    via = entered.get(diag.span.file)
    if via is None:
        return diag
    profile, span = via
    where = f"in profile '{profile}' ({diag.span})"
    return replace(diag, message=f"{where}: {diag.message}", span=span)


def _looks_like_path(ref: str) -> bool:
    return "/" in ref or "\\" in ref or ref.endswith((".yaml", ".yml")) or ref.startswith(".")


def _candidate(ref: str, base: Path | None) -> tuple[Path, bool]:
    """(the path ``ref`` names, whether it is a packaged profile)."""
    if not _looks_like_path(ref):
        found = profile_path(ref)
        if found is not None:
            return found, True
    candidate = Path(ref)
    if base is not None and not candidate.is_absolute():
        candidate = base.parent / candidate
    return candidate, False


def resolve_ref(ref: str, base: Path | None) -> Path | None:
    """A profile name or a path (relative to ``base``'s directory) -> a file or directory."""
    candidate, _profile = _candidate(ref, base)
    return candidate if candidate.exists() else None


def _outside(path: Path, base: Path) -> bool:
    """Whether ``path`` (symlinks followed) lies outside ``base``'s directory tree."""
    try:
        path.resolve().relative_to(base.parent.resolve())
    except (ValueError, OSError, RuntimeError):
        return True
    return False


@lru_cache(maxsize=1)
def _shipped() -> tuple[str, Path]:
    """The shipped rules directory (resolved, with a trailing separator) and what shipped
    files are shown relative to: computed once, as a directory of 10,000 files asks
    for every one."""
    return os.path.join(os.path.realpath(rules_dir()), ""), display_root()


def _display(path: Path, resolved: str | None = None) -> str:
    """A path as diagnostics and traces show it: a shipped rule file relative to the package
    (or checkout), any other relative to the current directory when under it, else as given."""
    real = resolved if resolved is not None else os.path.realpath(path)
    shipped, shown_from = _shipped()
    base = str(shown_from) if real.startswith(shipped) else os.getcwd()
    prefix = os.path.join(base, "")
    return real[len(prefix) :] if real.startswith(prefix) else str(path)


class _Loader:
    def __init__(self, allow_outside: bool) -> None:
        self.allow_outside = allow_outside
        self.out = RuleSource()
        self._done: set[str] = set()  # real paths
        self._active: dict[str, None] = {}  # the extends chain being read, in order
        self._via: tuple[str, Span] | None = None  # the user's `extends` of a profile

    def add_ref(self, ref: str, base: Path | None, span: Span | None) -> None:
        try:
            self._add_ref(ref, base, span)
        except (OSError, RuntimeError) as exc:  # a name too long, a symlink loop
            self._unusable(ref, span, exc)

    def add_path(self, path: Path, span: Span | None = None) -> None:
        try:
            if not os.path.lexists(path):
                where = span or Span(str(path))
                self.out.diagnostics.append(error("BR001", "no such rule file", where))
                return
            if span is None and self._escapes(path, None):
                return
            self._add_path(path, span)
        except (OSError, RuntimeError) as exc:
            self._unusable(str(path), span, exc)

    def _add_listed(self, path: Path, folder: str) -> None:
        """A file a directory listed (never a directory): its real path is the folder's
        plus its name unless it is a symlink, which spares a ``realpath`` per file."""
        try:
            real = None if os.path.islink(path) else os.path.join(folder, path.name)
            self._add_path(path, None, real)
        except (OSError, RuntimeError) as exc:
            self._unusable(str(path), None, exc)

    def _unusable(self, ref: str, span: Span | None, exc: Exception) -> None:
        reason = getattr(exc, "strerror", None) or str(exc)
        msg = f"cannot use rule file '{ref[:200]}': {reason}"
        self.out.diagnostics.append(error("BR001", msg, span or Span(ref[:200])))

    def _add_ref(self, ref: str, base: Path | None, span: Span | None) -> None:
        candidate, profile = _candidate(ref, base)
        if not profile and not self.allow_outside:
            if base is not None and _outside(candidate, base):
                self._refuse(
                    f"'extends: {escape(ref)}' leaves the directory of the file that names it",
                    span or Span(ref),
                )
                return
            if base is None and self._escapes(candidate, span):
                return
        if self._users_profile(profile, base, span) and span is not None:
            self._via = (ref, span)
            try:
                self._add_path(candidate, span)
            finally:
                self._via = None
            return
        path = candidate if candidate.exists() else None
        if path is None:
            where = span or Span(ref)
            if _looks_like_path(ref):
                self.out.diagnostics.append(error("BR001", f"no such rule file '{ref}'", where))
            else:
                known = profile_names()
                hint = did_you_mean(ref, known) or f"known profiles: {', '.join(known)}"
                self.out.diagnostics.append(
                    error("BR008", f"unknown profile '{ref}'", where, hint=hint)
                )
            return
        self._add_path(path, span)

    def _users_profile(self, profile: bool, base: Path | None, span: Span | None) -> bool:
        """Whether a user's own file (not a packaged one) names a profile in ``extends``."""
        if not profile or base is None or span is None or self._via is not None:
            return False
        return not os.path.realpath(base).startswith(_shipped()[0])

    def _refuse(self, message: str, span: Span) -> None:
        self.out.diagnostics.append(
            error(
                "BR015",
                message,
                span,
                hint="move the file under it, or allow it with --allow-outside "
                f"or {ALLOW_OUTSIDE_ENV}=1",
            )
        )

    def _escapes(self, path: Path, span: Span | None, root: Path | None = None) -> bool:
        """Refuse (BR015) a file named directly or listed in a directory when a symlink
        takes it out of its project, so no value or key of an outside file is ever shown."""
        if self.allow_outside or not os.path.islink(path):
            return False
        boundary = root if root is not None else project_root(path.parent)
        if not leaves(path, boundary):
            return False
        shown = escape(str(path))
        self._refuse(f"'{shown}' is a symlink that leads out of the project", span or Span(shown))
        return True

    def _add_path(self, path: Path, span: Span | None = None, real: str | None = None) -> None:
        if real is None and path.is_dir():
            kernel = kernel_directory(path, _display(path))
            if kernel is not None:
                self.out.diagnostics.append(kernel if span is None else _at_extends(kernel, span))
                return
            files = rule_files_in(path)
            if not files:
                where = span or Span(_display(path))
                self.out.diagnostics.append(
                    error("BR001", "directory holds no *.yaml rule files", where)
                )
            root, folder = project_root(path), os.path.realpath(path)
            for file in files:
                if not self._escapes(file, None, root):
                    self._add_listed(file, folder)
            return
        real = os.path.realpath(path) if real is None else real
        shown = _display(path, real)
        if real in self._active:
            chain = " -> ".join(_display(Path(p), p) for p in [*self._active, real])
            self.out.diagnostics.append(
                error("BR009", f"'extends' cycle: {chain}", span or Span(shown))
            )
            return
        if real in self._done:
            return
        if self._via is not None:
            self.out.entered.setdefault(shown, self._via)
        doc, diags = read_file(path, shown)
        if span is not None:
            # Name the file where the `extends` that reached it was written.
            diags = [_at_extends(d, span) if d.span.line == 0 else d for d in diags]
        self.out.diagnostics.extend(diags)
        if doc is None:
            return
        rules, diags = validate_document(doc)
        self.out.diagnostics.extend(diags)
        if rules is None:
            return
        self._active[real] = None
        extends = rules.extends_list()
        for index, ref in enumerate(extends):
            loc: tuple[str | int, ...] = (
                ("extends", index) if isinstance(rules.extends, list) else ("extends",)
            )
            self.add_ref(ref, path, doc.source_map.value_span(loc))
        self._active.popitem()
        self._done.add(real)
        self.out.files.append(SourcedFile(rules, doc))


def _at_extends(diag: Diagnostic, span: Span) -> Diagnostic:
    return replace(diag, message=f"{diag.message}: {diag.span}", span=span)


def load_sources(
    refs: str | Path | list[str | Path] | None, allow_outside: bool | None = None
) -> RuleSource:
    """Load every file a rule reference names, expanding ``extends``, base first.

    ``extends`` may not leave the directory tree of the file that names it unless
    ``allow_outside`` (default: :func:`allow_outside_default`) says so.
    """
    if allow_outside is None:
        allow_outside = allow_outside_default()
    loader = _Loader(allow_outside)
    if refs is None:
        refs = ["default"]
    if not isinstance(refs, list):
        refs = [refs]
    for ref in refs:
        if isinstance(ref, Path):
            loader.add_path(ref)
        else:
            loader.add_ref(ref, None, None)
    return loader.out
