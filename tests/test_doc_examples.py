"""Every ``bridge-rules`` command in the README and docs/ is run, and its output is compared
where the page shows output.

A page's code blocks are read in order:

- a ``console`` block: each ``$ command`` runs in a scratch directory, and what it prints must
  match the lines under it (a line ``...`` stands for any number of lines, ``...`` inside a
  line for any text; shipped rule paths are compared as this install shows them);
- an ``sh`` (or unmarked) block: each ``bridge-rules`` command runs and must succeed; ``serve``
  runs until its start line, then gets SIGTERM and must exit 0;
- a synopsis (``[--option]``, ``FILE``, ``A|B``) is not run: each option it names must be in
  the command's ``--help``, so a synopsis cannot list an option that is gone;
- a ``pin capture`` recipe that runs an agent CLI (``-- claude ...``) is checked like a
  synopsis here; the real agents run in ``tests/e2e``.

Files the examples read are the page's own: a YAML block whose first line is ``# NAME``, or
that follows "write `NAME`:", is written to NAME first, in every scratch directory.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from bridge_rules.resources import display_root

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]
BIN = Path(sys.executable).parent / "bridge-rules"
BLOCK = re.compile(r"```(\w*)\n(.*?)```", re.S)
AGENT = re.compile(r"\s--\s")  # `pin capture ... -- AGENT ...`
SYNOPSIS = re.compile(r"\[|\||\b(?:FILE|PATH|NAME|TOOL|COMMAND|CODE|X|A B)\b|\.\.\.")
SHIPPED = "bridge_rules/_data/rules/"


@dataclass
class Example:
    page: Path
    line: int
    command: str
    expected: list[str] | None = None  # console output, when the page shows it

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT).as_posix()}:{self.line}"


@dataclass
class Pages:
    files: dict[str, str] = field(default_factory=dict)
    run: list[Example] = field(default_factory=list)
    synopses: list[Example] = field(default_factory=list)
    installs: list[Example] = field(default_factory=list)
    """Every ``pip install`` line, in any block (a CI recipe's ``- run:`` too)."""


def _commands(body: str) -> list[tuple[int, str]]:
    """Each command of a shell block with its line offset: continuation lines joined, heredocs
    and comments dropped."""
    out: list[tuple[int, str]] = []
    lines = body.splitlines()
    i = 0
    while i < len(lines):
        start, text = i, lines[i]
        while text.endswith("\\") and i + 1 < len(lines):
            i += 1
            text = text[:-1] + " " + lines[i].strip()
        if "<<'EOF'" in text:
            while i < len(lines) and lines[i].strip() != "EOF":
                i += 1
        elif text.strip() and not text.lstrip().startswith("#"):
            out.append((start, text))
        i += 1
    return out


def _without_comment(command: str) -> str:
    return re.sub(r"\s+#\s.*$", "", command).strip()


def collect() -> Pages:
    pages = Pages()
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in BLOCK.finditer(text):
            lang, body = match.group(1), match.group(2)
            line = text[: match.start()].count("\n") + 2
            _installs(pages, page, line, body)
            before = text[: match.start()].rstrip()
            if lang == "yaml":
                first = body.splitlines()[0] if body else ""
                named = re.match(r"# ([\w.-]+\.ya?ml)$", first)
                wrote = re.search(r"write `([\w.-]+\.ya?ml)`:$", before)
                if named or wrote:
                    name = (named or wrote).group(1)  # type: ignore[union-attr]
                    pages.files[name] = body
            elif lang == "console":
                _console(pages, page, line, body)
            elif lang in ("sh", ""):
                for offset, command in _commands(body):
                    _shell(pages, page, line + offset, command)
    return pages


def _console(pages: Pages, page: Path, line: int, body: str) -> None:
    current: Example | None = None
    for offset, text in enumerate(body.splitlines()):
        if text.startswith("$ "):
            current = Example(page, line + offset, text[2:], [])
            pages.run.append(current)
        elif current is not None and current.expected is not None:
            current.expected.append(text)


def _shell(pages: Pages, page: Path, line: int, command: str) -> None:
    for piece in _without_comment(command).split(" && "):
        part = piece.strip()
        if not part.startswith("bridge-rules"):
            continue  # pip, npm, python: not this tool's commands
        example = Example(page, line, part)
        if SYNOPSIS.search(part.split(" -- ")[0]) or AGENT.search(part):
            pages.synopses.append(example)
        else:
            pages.run.append(example)


def _installs(pages: Pages, page: Path, line: int, body: str) -> None:
    for offset, text in enumerate(body.splitlines()):
        found = re.search(r"\bpip install\b.*", text.lstrip().removeprefix("#").strip())
        if found:
            command = _without_comment(found.group(0)).split(" && ")[0]
            pages.installs.append(Example(page, line + offset, command))


PAGES_FOUND = collect()


def _matches(expected: list[str], actual: list[str]) -> bool:
    """``expected`` against ``actual``: ``...`` alone skips lines, inside a line any text."""
    if not expected:
        return not actual
    head, rest = expected[0], expected[1:]
    if head.strip() == "...":
        return any(_matches(rest, actual[i:]) for i in range(len(actual) + 1))
    if not actual:
        return False
    pattern = ".*".join(re.escape(piece) for piece in head.split("..."))
    return bool(re.fullmatch(pattern, actual[0])) and _matches(rest, actual[1:])


def _as_installed(line: str) -> str:
    """Shipped rule paths as this install shows them (a checkout: ``rules/...``)."""
    shown = (display_root() / "rules").is_dir() and not (display_root() / "bridge_rules").is_dir()
    return line.replace(SHIPPED, "rules/") if shown else line


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name, body in PAGES_FOUND.files.items():
        (tmp_path / name).write_text(body, encoding="utf-8")
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _env() -> dict[str, str]:
    env = {**os.environ, "NO_COLOR": "1", "PATH": f"{BIN.parent}{os.pathsep}{os.environ['PATH']}"}
    for name in ("FORCE_COLOR", "GITHUB_ACTIONS", "BRIDGE_RULES_SEAL_KEY"):
        env.pop(name, None)
    return env


def _serve(command: str, cwd: Path) -> tuple[int, str]:
    """A documented ``serve`` command, on a free port, until it has started; then SIGTERM."""
    argv = [*shlex.split(command), "--port", "0"]
    proc = subprocess.Popen(
        argv, cwd=cwd, env=_env(), stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    assert proc.stderr is not None
    deadline = time.monotonic() + 30
    seen: list[str] = []
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        seen.append(line)
        if '"event":"serve.start"' in line:
            proc.send_signal(signal.SIGTERM)
            break
    try:
        code = proc.wait(timeout=40)
    finally:
        if proc.poll() is None:
            proc.kill()
    return code, "".join(seen) + proc.stderr.read()


@pytest.mark.parametrize("example", PAGES_FOUND.run, ids=lambda e: e.id)
def test_documented_command_runs_as_shown(example: Example, scratch: Path) -> None:
    if " serve " in f" {example.command} " and "--config" not in example.command:
        code, err = _serve(example.command, scratch)
        assert code == 0, err
        assert '"event":"serve.start"' in err
        return
    done = subprocess.run(
        ["bash", "-c", example.command],
        cwd=scratch,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if example.expected is None:
        assert done.returncode == 0, done.stdout + done.stderr
        return
    printed = (done.stdout + done.stderr).splitlines()
    expected = [_as_installed(line) for line in example.expected]
    assert _matches(expected, printed), "\n".join(["printed:", *printed])


def _help(words: list[str]) -> str | None:
    done = subprocess.run(
        [str(BIN), *words, "--help"], capture_output=True, text=True, env=_env(), check=False
    )
    return done.stdout if done.returncode == 0 else None


@pytest.mark.parametrize("example", PAGES_FOUND.synopses, ids=lambda e: e.id)
def test_documented_synopsis_names_real_options(example: Example) -> None:
    words = shlex.split(example.command.split(" -- ")[0].replace("|", " "))[1:]
    path = []
    for word in words:
        if not re.fullmatch(r"[a-z][a-z-]*", word):
            break
        path.append(word)
    text = _help(path)
    while text is None and path:
        path.pop()
        text = _help(path)
    assert text is not None
    options = {o.rstrip("]") for o in re.findall(r"--[a-z][a-z-]*\]?", example.command)}
    options -= {"--"}
    missing = sorted(o for o in options if o not in text and not _after_agent(o, example))
    assert not missing, f"{' '.join(['bridge-rules', *path])} --help has no {missing}"


def _after_agent(option: str, example: Example) -> bool:
    """An option of the agent CLI (after ``--``), not of bridge-rules."""
    _, _, agent = example.command.partition(" -- ")
    return option in agent


def test_every_page_with_commands_is_covered() -> None:
    """The collector finds the examples it is meant to: none silently skipped."""
    pages = {e.page.name for e in PAGES_FOUND.run + PAGES_FOUND.synopses}
    assert {"README.md", "cli.md", "lint.md", "pins.md", "proxy.md", "transform.md"} <= pages
    assert "my.bridge-rules.yaml" in PAGES_FOUND.files


def test_the_docs_name_every_packaged_pin_and_only_modules_that_exist() -> None:
    """docs/lint.md and docs/pins.md list the packaged pins; lint.md's table names modules."""
    lint_doc = (ROOT / "docs" / "lint.md").read_text(encoding="utf-8")
    pins_doc = (ROOT / "docs" / "pins.md").read_text(encoding="utf-8")
    for pin in sorted((ROOT / "schemas").glob("*/*.json")):
        product, version = pin.parent.name, pin.stem
        assert f"`{product}/{version}.json`" in lint_doc, pin
        assert f"{product}@{version}" in pins_doc or f"`@{version}`" in pins_doc, pin
    named = set(re.findall(r"`((?:[a-z_]+/)*[a-z_]+\.py)`", lint_doc))
    missing = [
        m
        for m in sorted(named)
        if not (ROOT / "src" / "bridge_rules" / m).is_file() and not (ROOT / m).is_file()
    ]
    assert not missing, f"docs/lint.md names modules that do not exist: {missing}"


def test_examples_use_a_current_model_id() -> None:
    """Every Claude model id the README and docs/ show is one the anthropic SDK lists, and
    not one it warns is deprecated (the SDK prints that warning on every call)."""
    import typing

    from anthropic.types import ModelParam

    listed = {a for arg in typing.get_args(ModelParam) for a in typing.get_args(arg)}
    try:
        from anthropic._data import DEPRECATED_MODELS
    except ImportError:  # an SDK without the list: nothing to hold against
        DEPRECATED_MODELS = {}
    shown = {
        model
        for page in PAGES
        for model in re.findall(
            r"\bclaude-(?:sonnet|opus|haiku)-[0-9][0-9-]*[0-9]\b", page.read_text("utf-8")
        )
    }
    assert shown
    assert shown <= listed, shown - listed
    assert not shown & set(DEPRECATED_MODELS), shown & set(DEPRECATED_MODELS)


def test_the_tutorials_rule_file_is_one_a_bare_lint_finds(tmp_path: Path) -> None:
    from bridge_rules.lint.discover import discover

    written = re.findall(r"write `([\w.-]+\.ya?ml)`:", (ROOT / "README.md").read_text("utf-8"))
    assert written
    for name in written:
        (tmp_path / name).write_text(PAGES_FOUND.files[name], encoding="utf-8")
    (tmp_path / ".git").mkdir()
    assert sorted(p.name for p in discover(tmp_path).paths) == sorted(written)


REPOSITORY = "https://github.com/bridge-rules/bridge-rules"


def _from_the_clone(target: str) -> str:
    """What a documented ``pip install`` target installs, as a requirement on this clone
    (``ROOT[extras]``); fails for a form that does not work from a fresh clone."""
    from packaging.requirements import InvalidRequirement, Requirement

    path, _, extras = target.partition("[")
    if path in (".", "./") or (Path(path).name == "bridge-rules" and path.startswith("./")):
        return f"{ROOT}[{extras}" if extras else str(ROOT)
    try:
        requirement = Requirement(target)
    except InvalidRequirement as exc:
        raise AssertionError(f"{target!r} is no requirement pip reads: {exc}") from None
    assert requirement.name == "bridge-rules", f"{target!r}: another package than this one"
    assert requirement.url is not None, (
        f"{target!r} asks PyPI for bridge-rules, which is not there: write "
        f"'.[...]' (in a clone) or 'bridge-rules[...] @ git+{REPOSITORY}@main'"
    )
    assert requirement.url.startswith(f"git+{REPOSITORY}@"), requirement.url
    extras = ",".join(sorted(requirement.extras))
    return f"{ROOT}[{extras}]" if extras else str(ROOT)


@pytest.mark.parametrize("example", PAGES_FOUND.installs, ids=lambda e: e.id)
def test_documented_install_works_from_a_clone(example: Example) -> None:
    """Each ``pip install`` line the README and docs show, as pip itself reads it: offline
    (``--no-index``), resolving only the clone (``--no-deps --dry-run``), with an extra pip
    does not know refused. A git URL stands for the clone it names."""
    words = shlex.split(example.command)[2:]
    targets = [w for w in words if not w.startswith("-")]
    assert targets, example.command
    for target in targets:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "install", "--dry-run", "--no-index", "--no-deps",
             "--ignore-installed", "--no-build-isolation", "-q", _from_the_clone(target)],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "does not provide the extra" not in done.stderr, done.stderr


def test_a_name_pypi_does_not_hold_is_refused() -> None:
    """The check above fails the line the issue found (the package is not on PyPI)."""
    with pytest.raises(AssertionError, match="not there"):
        _from_the_clone("bridge-rules[claude-code]")
    assert _from_the_clone(f"bridge-rules[claude-code] @ git+{REPOSITORY}@main").endswith(
        "[claude-code]"
    )
