"""Every input of the hostile rule-file corpus through lint, explain and ``load()``.

Each is bounded in time (``runner.BOUND_SECONDS``, by ``SIGALRM``); a traceback
or a hang fails the case, and the run ends with the summary line
``hostile inputs: N tried, 0 tracebacks, 0 hangs, 0 values lost``.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from tests.hostile.corpus import Case, all_cases
from tests.hostile.runner import run_case
from tests.hostile.tally import TALLY

CASES = all_cases()


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("corpus")


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_rule_file(case: Case, scratch: Path) -> None:
    # A fresh directory per case, in one module-wide directory: pytest's tmp_path scans
    # its parent for every new directory, and ~970 of them made that quadratic.
    where = Path(tempfile.mkdtemp(dir=scratch))
    try:
        outcome = run_case(case, where)
    finally:
        shutil.rmtree(where, ignore_errors=True)
    TALLY.tried += 1
    TALLY.tracebacks += bool(outcome.tracebacks) and not outcome.hang
    TALLY.hangs += outcome.hang
    assert not outcome.tracebacks, "\n".join(outcome.tracebacks)


def test_the_corpus_is_large_and_covers_each_family() -> None:
    families = {c.name.split("-")[0] for c in CASES}
    assert len(CASES) >= 617  # the campaign the issue reports tried 617
    assert {
        "tag",
        "merge",
        "escape",
        "number",
        "wrong",
        "extends",
        "mutant",
        "jmespath",
    } <= families
