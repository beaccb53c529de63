"""Print the hostile suite's summary line after the run (when any hostile test ran)."""

from __future__ import annotations

import pytest
from tests.hostile.tally import TALLY


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if TALLY.tried:
        terminalreporter.write_line(TALLY.line())
