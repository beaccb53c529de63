"""Shared fixtures and hooks. Everything the tests read lives in this repository.

The suite runs under pytest-xdist (``-n auto`` in pyproject.toml): the end-to-end tests
are kept on one worker, and the hostile suite's summary line adds up every worker's tally.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Generator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from tests.hostile.tally import TALLY
from tests.usercache import user_cache

ROOT = Path(__file__).resolve().parent.parent
TALLY_KEY = "hostile_tally"
UNGROUPED = pytest.StashKey[set[str]]()
_ID_LIMIT = 60

# Hypothesis budgets (tests/budget.py): "dev" runs 25% of each property's examples, "ci"
# (`--hypothesis-profile=ci`, which the README's test command passes) runs them all and
# prints the blob that reproduces a failure. Neither has a per-example deadline: the suite
# runs on every core beside servers it starts, and a busy 2-core machine made the default
# 200 ms deadline fail examples that take a few ms when the machine is quiet.
settings.register_profile("dev", max_examples=25, deadline=None)
settings.register_profile("ci", max_examples=100, print_blob=True, deadline=None)
# Ten times CI's examples, for a search before a release: `--hypothesis-profile=deep`.
settings.register_profile("deep", max_examples=1000, print_blob=True, deadline=None)
settings.load_profile("dev")


def pytest_configure(config: pytest.Config) -> None:
    # The suite starts a few hundred Python processes (the CLI, `serve` and its workers).
    # Under PYTHONDONTWRITEBYTECODE each of them compiled the whole package from source,
    # about 0.1 s of CPU apiece. Their bytecode goes to one cache outside the clone instead,
    # so the tree gets no __pycache__ either way; xdist's workers and every process they
    # start inherit this. A prefix the user set is kept.
    if "PYTEST_XDIST_WORKER" in os.environ or os.environ.get("PYTHONPYCACHEPREFIX"):
        return
    os.environ["PYTHONPYCACHEPREFIX"] = str(user_cache() / "pycache")
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    # `-n auto`: two workers a core, at most four more than the cores. Much of the suite
    # waits on servers and processes it starts (a `serve` coming up, a drain, a slow
    # client), and a worker that waits leaves its core idle; on 2 cores, 4 workers took the
    # quick suite from 61 s to 51 s. Past that, each worker's collection costs more than
    # the waiting it overlaps.
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return min(2 * (cores or 1), (cores or 1) + 4)


def pytest_make_parametrize_id(config: pytest.Config, val: object, argname: str) -> str | None:
    # A long text or bytes case (a 10 kB backtracking input, a stream of junk) would be its
    # whole node id, in every report line: its head, its length and a digest instead.
    if not isinstance(val, (str, bytes)) or len(val) <= _ID_LIMIT:
        return None
    raw = val.encode("utf-8", "surrogatepass") if isinstance(val, str) else val
    head = val[:24] if isinstance(val, str) else val[:24].decode("ascii", "backslashreplace")
    head = head.encode("unicode_escape").decode("ascii")
    return f"{head}...{len(val)}-{hashlib.sha256(raw).hexdigest()[:6]}"


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> Generator[None, None, None]:
    # One worker installs the agents' npm packages and drives them; the others never wait.
    # The group goes on before any other plugin's hook: xdist's worker reads it in its own.
    for item in items:
        if item.get_closest_marker("e2e") is not None:
            item.add_marker(pytest.mark.xdist_group("e2e"))
    yield
    # By now an xdist worker under --dist loadgroup has tagged each grouped node id with
    # "@e2e". A pytest/xdist pairing that stops doing so fails the e2e tests with the
    # reason (an error raised here would reach the controller as a bare assertion).
    if getattr(config.option, "loadgroup", False):
        config.stash[UNGROUPED] = {
            i.nodeid for i in items if i.get_closest_marker("e2e") and "@" not in i.nodeid
        }


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.nodeid in item.config.stash.get(UNGROUPED, set()):
        pytest.fail(
            "pytest-xdist did not put this test in the e2e group: this pytest and "
            "pytest-xdist do not work together (see the pytest pin in pyproject.toml)",
            pytrace=False,
        )


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput: dict[str, Any] | None = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: hand the tally to the controller
        workeroutput[TALLY_KEY] = asdict(TALLY)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    TALLY.add(node.workeroutput.get(TALLY_KEY, {}))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if TALLY.tried:
        terminalreporter.write_line(TALLY.line())
