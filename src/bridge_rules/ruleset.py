"""Loading a rule set for use: the one path from rule references to a checked Runtime.

Used by the public facade (``bridge_rules.load``), the CLI and the proxy. A rule
set is refused exactly when ``bridge-rules lint`` would report an error for it,
because both go through :func:`bridge_rules.lint.analysis.analyse`. Bindings added
while the program runs (:func:`with_bindings`) go through the same checks, laid over
the files in an order that does not depend on when each arrived.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bridge_rules.compose import RuleSource, SourcedFile
from bridge_rules.diagnostics import Diagnostic, RulesError, error, has_errors, sort_diagnostics
from bridge_rules.lint.analysis import Analysis, analyse, analyse_source
from bridge_rules.loader import Document, parse_text, read_file, rule_files_in
from bridge_rules.runtime import Runtime
from bridge_rules.source import Span
from bridge_rules.validate import validate_document

RuleRef = str | os.PathLike[str] | Iterable[str | os.PathLike[str]] | None


def normalise_refs(ref: RuleRef) -> str | Path | list[str | Path] | None:
    """Rule references as the loader takes them; a clear TypeError for anything else."""
    if ref is None or isinstance(ref, str):
        return ref
    if isinstance(ref, os.PathLike):
        return Path(ref)
    if isinstance(ref, (bytes, bytearray)) or not isinstance(ref, Iterable):
        raise TypeError(
            f"rules must be a profile name, a path, or a list of them, not {type(ref).__name__}"
        )
    out: list[str | Path] = []
    for item in ref:
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, os.PathLike):
            out.append(Path(item))
        else:
            raise TypeError(
                f"each rule reference must be a str or a path, not {type(item).__name__}"
            )
    return out


def load_analysis(rules: RuleRef = None) -> Analysis:
    """The checked rule set; raises :class:`RulesError` with every problem if any is an error."""
    analysis = analyse(normalise_refs(rules))
    if analysis.runtime is None or analysis.has_errors:
        raise RulesError(analysis.diagnostics)
    return analysis


def load_runtime(rules: RuleRef = None) -> Runtime:
    """The compiled runtime of a rule set that has no errors (see :func:`load_analysis`)."""
    runtime = load_analysis(rules).runtime
    assert runtime is not None
    return runtime


# ------------------------------------------------------------------ bindings at run time
RUNTIME_KEYS = frozenset({"bridge-rules", "name", "description", "bindings"})
"""What a source of runtime bindings may hold; other rules belong in the rule files."""


@dataclass(frozen=True)
class BindingSource:
    """Bindings added while the program runs, and who added them.

    ``origin`` names the source (an extension's name, or a file of a bindings directory);
    it is where ``explain`` and diagnostics say the bindings were written. ``directory``
    is the directory the file was read from, so reading it again replaces them all.
    """

    origin: str
    file: SourcedFile | None
    diagnostics: tuple[Diagnostic, ...] = ()
    directory: str | None = None


def binding_source(origin: str, bindings: Sequence[Mapping[str, Any]]) -> BindingSource:
    """Bindings given as data (what a rule file's ``bindings:`` list holds), checked as a
    rule file named ``<bindings:ORIGIN>`` whose lines are the data written as indented
    JSON, so every diagnostic has a line to point at."""
    if not isinstance(origin, str) or not origin:
        raise TypeError("origin must be a non-empty str")
    if isinstance(bindings, (str, bytes, Mapping)) or not isinstance(bindings, Sequence):
        raise TypeError(
            f"bindings must be a list of binding mappings, not {type(bindings).__name__}"
        )
    text = json.dumps({"bridge-rules": 1, "bindings": list(bindings)}, indent=2)
    doc, diags = parse_text(text, f"<bindings:{origin}>")
    return _checked(origin, doc, diags, None)


def binding_file(path: Path, directory: str | None = None) -> BindingSource:
    """One YAML file of bindings (``bridge-rules: 1`` and ``bindings:``)."""
    doc, diags = read_file(path, str(path))
    return _checked(str(path), doc, diags, directory)


def binding_files_in(directory: Path) -> list[BindingSource]:
    """Every ``*.yaml`` file of a bindings directory, one source each."""
    where = str(directory)
    try:
        files = rule_files_in(directory)
    except OSError as exc:
        problem = error("BR001", f"cannot read the bindings directory: {exc.strerror}", Span(where))
        return [BindingSource(where, None, (problem,), where)]
    return [binding_file(path, where) for path in files]


def _checked(
    origin: str, doc: Document | None, diags: list[Diagnostic], directory: str | None
) -> BindingSource:
    if doc is None:
        return BindingSource(origin, None, tuple(diags), directory)
    found = list(diags)
    for key in doc.data:
        if key not in RUNTIME_KEYS:
            found.append(
                error(
                    "BR410",
                    f"a source of runtime bindings holds only `bindings`, not '{key}'",
                    doc.source_map.key_span((key,)),
                    hint="put other rules in the rule files, which serve reads again on reload",
                )
            )
    rules, problems = validate_document(doc)
    found.extend(problems)
    file = SourcedFile(rules, doc) if rules is not None and not has_errors(found) else None
    return BindingSource(origin, file, tuple(found), directory)


def _bound_twice(sources: Sequence[BindingSource]) -> list[Diagnostic]:
    """A local tool bound by two runtime bindings: whichever came last would win, so the
    result would depend on the order they arrived in. Refused instead."""
    first: dict[str, Span] = {}
    found: list[Diagnostic] = []
    for source in sources:
        if source.file is None:
            continue
        smap = source.file.doc.source_map
        for index, binding in enumerate(source.file.rules.bindings or []):
            span = smap.key_span(("bindings", index))
            earlier = first.setdefault(binding.local, span)
            if earlier is not span:
                found.append(
                    error(
                        "BR409",
                        f"'{binding.local}' is bound at run time twice (also at {earlier})",
                        span,
                        hint="keep one of them: which one wins may not depend on which "
                        "arrived first",
                    )
                )
    return found


def with_bindings(
    files: Sequence[SourcedFile], sources: Mapping[str, BindingSource], name: str
) -> Analysis:
    """Rule files with runtime bindings laid over them, checked as one rule set.

    The sources come after every file, in the order of their origins (never the order they
    arrived in), so any arrival order gives the same rule set; a local tool bound by two
    of them is an error (BR409). Raises :class:`RulesError` exactly as :func:`load_analysis`.
    """
    ordered = [sources[origin] for origin in sorted(sources)]
    problems = [d for source in ordered for d in source.diagnostics]
    problems.extend(_bound_twice(ordered))
    if has_errors(problems):
        raise RulesError(sort_diagnostics(problems))
    added = [source.file for source in ordered if source.file is not None]
    analysis = analyse_source(RuleSource([*files, *added], problems), name)
    if analysis.runtime is None or analysis.has_errors:
        raise RulesError(analysis.diagnostics)
    return analysis
