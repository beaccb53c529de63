"""The ``lsp`` extra stays optional: without pygls the CLI works and ``lsp`` names the extra.

The oracle is the interpreter's own ``sys.modules`` in a fresh process, and a process in
which pygls and lsprotocol cannot be imported at all (a finder that refuses them, as an
install without the extra would).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BLOCKER = (
    "import sys\n"
    "class _Absent:\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    "        if name.partition('.')[0] in ('pygls', 'lsprotocol'):\n"
    "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
    "        return None\n"
    "sys.meta_path.insert(0, _Absent())\n"
)
RULES = Path(__file__).resolve().parent.parent / "lint" / "fixtures" / "br301-pass.yaml"


def _python(code: str, cwd: Path, blocked: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if blocked is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(blocked), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, env=env, check=False
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["lint", str(RULES)],
        ["explain", "get_task", "--rules", str(RULES)],
        ["codes", "BR301"],
        ["schema", "--path"],
        ["lsp", "--help"],
    ],
)
def test_no_command_but_lsp_imports_pygls(argv: list[str], tmp_path: Path) -> None:
    code = (
        "import sys\nfrom bridge_rules.cli.app import main\n"
        f"status = main({argv!r})\n"
        "loaded = sorted(m for m in sys.modules if m.partition('.')[0] in "
        "('pygls', 'lsprotocol', 'bridge_rules'))\n"
        "print([m for m in loaded if not m.startswith('bridge_rules') or m.startswith("
        "'bridge_rules.lsp')], status)\n"
    )
    done = _python(code, tmp_path)
    assert done.stdout.splitlines()[-1] == "[] 0", done.stderr


def test_without_the_extra_lsp_names_it(tmp_path: Path) -> None:
    (tmp_path / "sitecustomize.py").write_text(BLOCKER, encoding="utf-8")
    missing = _python(
        "import pygls", tmp_path, blocked=tmp_path
    )  # the blocker works: pygls is absent here
    assert "No module named 'pygls'" in missing.stderr
    done = _python(
        "import sys\nfrom bridge_rules.cli.app import entry\nsys.argv = ['bridge-rules', 'lsp']\n"
        "entry()\n",
        tmp_path,
        blocked=tmp_path,
    )
    assert done.returncode == 2  # a usage error, as `serve --upstream claude-code` without its SDK
    assert "pip install 'bridge-rules[lsp]'" in done.stderr
    assert "Traceback" not in done.stderr
    lint = _python(
        f"from bridge_rules.cli.app import main\nprint(main(['lint', {str(RULES)!r}]))",
        tmp_path,
        blocked=tmp_path,
    )
    assert lint.stdout.splitlines()[-1] == "0", lint.stderr
