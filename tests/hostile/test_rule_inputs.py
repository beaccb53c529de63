"""Rule-file inputs from issue 26: devices, FIFOs, sockets, symlinks out of the project,
pyproject edge cases and ten thousand files.

Each case runs the real CLI in a throwaway project, under the hostile suite's time bound,
and is counted in its summary line. What a case must show: the exit status, the code of a
located error, and that nothing of a file outside the project reaches the output.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.hostile.cli_kit import HEAD, SECRET, SECRET_KEY, run


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _socket(path: Path) -> None:
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(path))
    sock.close()


def _link_out(path: Path) -> None:
    path.symlink_to(path.parents[2] / "outside" / "creds.yaml")


def _dir_out(path: Path) -> None:
    path.with_suffix("").symlink_to(path.parents[2] / "outside", target_is_directory=True)


SPECIALS: dict[str, tuple[Callable[[Path], None], str]] = {
    "fifo": (_fifo, "BR001"),
    "socket": (_socket, "BR001"),
    "symlink-out": (_link_out, "BR015"),
    "dir-symlink-out": (_dir_out, "BR015"),
}


@pytest.mark.parametrize("kind", list(SPECIALS))
@pytest.mark.parametrize("how", ["discovered", "named", "directory", "extends"])
def test_special_or_outside_files_are_refused_by_name(project: Path, kind: str, how: str) -> None:
    make, code = SPECIALS[kind]
    make(project / "rules" / "x.yaml")
    shown = "rules/x" if kind == "dir-symlink-out" else "rules/x.yaml"
    argv_shown = shown
    if (how, kind) == ("directory", "dir-symlink-out"):
        code, shown = "BR001", "rules"  # --rules DIR reads its own *.yaml files only: none
    argv = {
        "discovered": ["lint"],
        "named": ["lint", argv_shown],
        "directory": ["explain", "--rules", "rules", "Read"],
        "extends": ["lint", "main.bridge-rules.yaml"],
    }[how]
    if how == "extends":
        (project / "main.bridge-rules.yaml").write_text(
            HEAD + f"extends: ./{argv_shown}\n", encoding="utf-8"
        )
    status, text = run(*argv)
    assert status == 2, text
    assert f"error[{code}]" in text, text
    assert shown in text, text
    assert SECRET_KEY not in text
    assert SECRET not in text


def test_character_device_named_or_extended(project: Path) -> None:
    status, text = run("lint", "/dev/null")
    assert (status, text.splitlines()[0]) == (
        2,
        "/dev/null: error[BR001] expected a regular file, found a device, FIFO or socket",
    )
    (project / "main.bridge-rules.yaml").write_text(HEAD + "extends: /dev/null\n", "utf-8")
    status, text = run("--allow-outside", "lint", "main.bridge-rules.yaml")
    assert status == 2
    assert "main.bridge-rules.yaml:2:10: error[BR001]" in text


@pytest.mark.parametrize(
    ("rules", "says"),
    [
        ('["/**/*.yaml"]', "'/**/*.yaml' is not a path relative to pyproject.toml"),
        ('["**x/*.yaml"]', "bad glob '**x/*.yaml'"),
        ('[""]', "'' is not a path relative to pyproject.toml"),
        ("[" * 10_000 + "]" * 10_000, "cannot read"),
    ],
    ids=["absolute-glob", "bad-glob", "empty", "deep-arrays"],
)
def test_pyproject_edge_cases_are_usage_errors(project: Path, rules: str, says: str) -> None:
    (project / "pyproject.toml").write_text(f"[tool.bridge-rules]\nrules = {rules}\n", "utf-8")
    status, text = run("lint")
    assert status == 2
    assert says in text


def test_a_glob_that_leaves_the_project_is_refused(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        '[tool.bridge-rules]\nrules = ["../outside/*.yaml"]\n', "utf-8"
    )
    status, text = run("lint")
    assert status == 2
    assert "error[BR015]" in text
    assert SECRET_KEY not in text


def test_an_empty_directory_is_an_error_not_the_packaged_rules(project: Path) -> None:
    (project / "empty").mkdir()
    status, text = run("lint", "empty")
    assert status == 2
    assert "empty: error[BR001] directory holds no *.yaml rule files" in text
    assert text.endswith("1 error, 0 warnings in 1 rule set\n")


@pytest.mark.parametrize("command", ["lint", "explain"])
def test_ten_thousand_rule_files_load_as_one_layered_set(project: Path, command: str) -> None:
    # How long it takes is benchmarks/bench_rules_scale.py's (issue 26: under 2 s of CPU;
    # 0.97 s measured), not a test's: a timing here would fail on a slower machine.
    many = project / "many"
    many.mkdir()
    for i in range(10_000):
        (many / f"r{i:05}.yaml").write_text(HEAD + f"local_tools: [t{i}]\n", "utf-8")
    argv = (
        ["lint", "--layered", "many"]
        if command == "lint"
        else ["explain", "--rules", "many", "t9999"]
    )
    status, text = run(*argv)
    assert status == 0, text
    if command == "explain":  # every file was layered in, and the last one's tool is known
        assert "r09999.yaml)" in text.splitlines()[1]
        assert "not a local tool name" not in text
