"""Run one hostile input through lint, explain and ``load()`` in-process, under a time bound.

The bound is enforced with ``SIGALRM`` (``signal.setitimer``): a run that takes
longer is interrupted and counted as a hang. Anything raised other than
:class:`~bridge_rules.RulesError` from ``load()``, an explain that exits 3 or
prints a traceback, or a text report carrying a raw control character, is a
traceback.
"""

from __future__ import annotations

import io
import os
import signal
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from tests.hostile.corpus import Case

import bridge_rules
from bridge_rules import reporters
from bridge_rules.cli.app import click_command
from bridge_rules.diagnostics import RulesError
from bridge_rules.lint.analysis import analyse
from bridge_rules.outside import ALLOW_OUTSIDE_ENV
from bridge_rules.reporters import Summary

BOUND_SECONDS = 10.0  # what the issue counts as a hang


class Hang(Exception):
    pass


@dataclass
class Outcome:
    name: str
    tracebacks: list[str] = field(default_factory=list)
    hang: bool = False


@contextmanager
def time_bound(seconds: float) -> Iterator[None]:
    def expire(_signum: int, _frame: Any) -> None:
        raise Hang

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def materialise(case: Case, where: Path) -> Path:
    rules = where / "rules"
    rules.mkdir(parents=True, exist_ok=True)
    for name, data in case.side.items():
        (rules / name).write_bytes(data)
    if case.special == "fifo":
        os.mkfifo(rules / "fifo.yaml")
    path = rules / "rules.yaml"
    path.write_bytes(case.text)
    return path


def _lint(path: Path) -> list[str]:
    problems = []
    analysis = analyse(path)
    diags = analysis.diagnostics
    summary = Summary(1, len(diags), 0, 0, len(analysis.suppressed))
    for name in reporters.REPORTERS:
        stream = io.StringIO()
        reporters.get(name)(diags, summary, stream)
        if name == "text":
            text = stream.getvalue()
            bad = [ch for ch in set(text) if not (ch.isprintable() or ch == "\n")]
            if bad or text.count("\n") != len(diags) + 1 + sum(len(d.related) for d in diags):
                problems.append(f"lint text output forged or raw control characters: {bad!r}")
    return problems


def _load(path: Path) -> list[str]:
    try:
        bridge_rules.load(path)
    except RulesError as exc:
        if not exc.diagnostics:
            return ["RulesError without diagnostics"]
    return []


def _explain(path: Path) -> list[str]:
    result = CliRunner().invoke(click_command(), ["explain", "--rules", str(path), "read"])
    out = result.output
    if "No such command" in out or "Usage:" in out:
        return [f"explain did not run: {out[:200]!r}"]
    if result.exit_code not in (0, 1, 2) or "Traceback" in out or "internal error" in out:
        return [f"explain exited {result.exit_code}: {out[-300:]!r} {result.exception!r}"]
    if any(not (ch.isprintable() or ch == "\n") for ch in set(out)):
        return [f"explain printed a raw control character: {out[-300:]!r}"]
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        return [f"explain raised {result.exception!r}"]
    return []


STEPS: dict[str, Callable[[Path], list[str]]] = {"lint": _lint, "load": _load, "explain": _explain}


def run_case(case: Case, where: Path, bound: float = BOUND_SECONDS) -> Outcome:
    outcome = Outcome(case.name)
    path = materialise(case, where)
    saved = os.environ.pop(ALLOW_OUTSIDE_ENV, None)
    if case.allow_outside:
        os.environ[ALLOW_OUTSIDE_ENV] = "1"
    try:
        for step, run in STEPS.items():
            try:
                with time_bound(bound):
                    outcome.tracebacks += [f"{step}: {p}" for p in run(path)]
            except Hang:
                outcome.hang = True
                outcome.tracebacks.append(f"{step}: over {bound:g} s")
            except Exception:
                outcome.tracebacks.append(f"{step}: {traceback.format_exc(limit=-3)}")
    finally:
        os.environ.pop(ALLOW_OUTSIDE_ENV, None)
        if saved is not None:
            os.environ[ALLOW_OUTSIDE_ENV] = saved
    return outcome
