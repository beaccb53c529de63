"""Shared fixtures and hooks. Everything the tests read lives in this repository.

The suite runs under pytest-xdist (``-n auto`` in pyproject.toml): the end-to-end tests
are kept on one worker, and the hostile suite's summary line adds up every worker's tally.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from tests.hostile.tally import TALLY

ROOT = Path(__file__).resolve().parent.parent
TALLY_KEY = "hostile_tally"


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # One worker installs the agents' npm packages and drives them; the others never wait.
    for item in items:
        if item.get_closest_marker("e2e") is not None:
            item.add_marker(pytest.mark.xdist_group("e2e"))


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
