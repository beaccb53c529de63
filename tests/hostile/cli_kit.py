"""The real CLI run in-process under the hostile suite's time bound, for the rule-input
cases: its exit status and everything it wrote, each run counted in the summary line."""

from __future__ import annotations

import io

import pytest
from tests.hostile.runner import BOUND_SECONDS, Hang, time_bound
from tests.hostile.tally import TALLY

from bridge_rules.cli import explain_cmd, lint_cmd, serve_cmd, transform_cmd
from bridge_rules.cli.app import main

HEAD = "bridge-rules: 1\n"
SECRET_KEY = "aws_secret_access_key"
SECRET = "s3cr3t-outside-value"

assert all((explain_cmd, lint_cmd, serve_cmd, transform_cmd))  # importing registers them


def run(*argv: str) -> tuple[int, str]:
    """The CLI's exit status and everything it wrote, counted in the hostile tally."""
    out, err = io.StringIO(), io.StringIO()
    TALLY.tried += 1
    try:
        with pytest.MonkeyPatch.context() as mp, time_bound(BOUND_SECONDS):
            mp.setattr("sys.stdout", out)
            mp.setattr("sys.stderr", err)
            code = main(list(argv))
    except Hang:
        TALLY.hangs += 1
        raise
    except BaseException:
        TALLY.tracebacks += 1
        raise
    text = out.getvalue() + err.getvalue()
    if "Traceback" in text or code == 3:
        TALLY.tracebacks += 1
    return code, text
