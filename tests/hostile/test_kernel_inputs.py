"""Kernel files and directories as rule inputs (issue 35): entries sampled from ``/proc`` and
``/sys`` as this machine has them, magic links such as ``/proc/self/fd/0``, FIFOs and
devices, through every entry that takes rule files.

The oracle is the machine's own tree, not a list written beside the code: the entries are
walked and sampled (seeded) at collection time, whatever their kind. Each must be refused
with exit status 2 and an error line located at the path as given (or at the ``extends``
that named it), with no traceback and within the hostile bound. ``/proc/<pid>`` of other
processes is never sampled: nothing of another process may reach a test's output.
"""

from __future__ import annotations

import os
import random
import re
from collections import deque
from pathlib import Path

import pytest
from tests.hostile.cli_kit import HEAD, run

import bridge_rules
from bridge_rules.diagnostics import RulesError

SEED = 35
PER_KIND = 6
FIXED = ["/proc/kmsg", "/proc/self/fd/0", "/proc/self/mem", "/proc/self/status",
         "/proc/self/exe", "/proc/self/cwd", "/proc/self/root", "/proc", "/sys",
         "/sys/kernel", "/dev/null", "/dev/zero", "/dev/urandom"]  # fmt: skip


def _kind(entry: os.DirEntry[str]) -> str:
    if entry.is_symlink():
        return "link"
    return "dir" if entry.is_dir(follow_symlinks=False) else "file"


def _walk(top: str, limit: int = 4000) -> dict[str, list[str]]:
    """Entries under ``top`` by kind, breadth first, three levels deep at most."""
    found: dict[str, list[str]] = {"file": [], "dir": [], "link": []}
    queue = deque([(top, 0)])
    seen = 0
    while queue and seen < limit:
        folder, depth = queue.popleft()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if folder == "/proc" and entry.name.isdigit():
                continue  # another process's files: never read, not even by a regression
            kind = _kind(entry)
            found[kind].append(entry.path)
            seen += 1
            if kind == "dir" and depth < 2:
                queue.append((entry.path, depth + 1))
    return found


def sample() -> list[str]:
    rng = random.Random(SEED)
    picked = list(FIXED)
    for top in ("/proc", "/sys"):
        for paths in _walk(top).values():
            picked += rng.sample(paths, min(PER_KIND, len(paths)))
    return list(dict.fromkeys(p for p in picked if os.path.lexists(p)))


SAMPLE = sample()
LOCATED = re.compile(r"^(?P<where>.+?): error\[(?P<code>BR0\d\d)\] ", re.MULTILINE)


def _located_at(text: str, where: str) -> bool:
    return any(m["where"] == where for m in LOCATED.finditer(text))


def test_the_sample_holds_each_kind() -> None:
    kinds = {"link" if os.path.islink(p) else "dir" if os.path.isdir(p) else "file" for p in SAMPLE}
    assert kinds == {"file", "dir", "link"}
    assert len(SAMPLE) >= 30


@pytest.mark.usefixtures("project")
@pytest.mark.parametrize("path", SAMPLE)
@pytest.mark.parametrize("entry", ["lint", "explain", "transform"])
def test_named_on_the_command_line(entry: str, path: str) -> None:
    body = Path("body.json")
    body.write_text('{"model": "m", "messages": []}', encoding="utf-8")
    argv = {
        "lint": ["lint", path],
        "explain": ["explain", "--rules", path, "Read"],
        "transform": ["transform", "outbound", "--rules", path, str(body)],
    }[entry]
    for allowed in ([], ["--allow-outside"]):
        status, text = run(*allowed, *argv)
        assert status == 2, text
        assert _located_at(text, path), text


@pytest.mark.parametrize("path", SAMPLE)
def test_extended_discovered_and_loaded(
    project: Path, path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "main.bridge-rules.yaml").write_text(HEAD + f"extends: {path}\n", "utf-8")
    status, text = run("--allow-outside", "lint", "main.bridge-rules.yaml")
    assert status == 2, text
    assert _located_at(text, "main.bridge-rules.yaml:2:10"), text
    (project / "main.bridge-rules.yaml").unlink()
    (project / "rules" / "x.yaml").symlink_to(path)
    status, text = run("--allow-outside", "lint")
    assert status == 2, text
    assert _located_at(text, "rules/x.yaml"), text
    monkeypatch.setenv("BRIDGE_RULES_ALLOW_OUTSIDE", "1")
    with pytest.raises(RulesError) as raised:
        bridge_rules.load(path)
    assert raised.value.diagnostics[0].span.file == path


@pytest.mark.usefixtures("project")
@pytest.mark.parametrize("path", FIXED)
def test_serve_refuses_before_it_listens(path: str) -> None:
    status, text = run("serve", "--rules", path, "--upstream", "http://127.0.0.1:9", "--port", "0")
    assert status == 2, text
    assert _located_at(text, path), text


def test_a_fifo_in_the_project_does_not_block(project: Path) -> None:
    os.mkfifo(project / "rules" / "x.yaml")
    for argv in (["lint"], ["lint", "rules/x.yaml"], ["explain", "--rules", "rules", "Read"]):
        status, text = run(*argv)
        assert status == 2, text
        assert _located_at(text, "rules/x.yaml"), text
