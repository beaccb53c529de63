"""Every command's status goes through one exit point: a command returns its code, a
CommandError carries one, and anything else is an internal error (exit 3) told in one line.
Each command's body is swapped for one that returns or raises, so the test covers the path
from typer's parsing to the status ``main`` returns, command by command."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

import click
import pytest

from bridge_rules.cli.app import CommandError, click_command, main

# The fewest arguments that parse, for each command; the body is replaced, so nothing runs.
ARGV = {
    ("codes",): [],
    ("drift",): ["--from", "a@1", "--to", "a@2"],
    ("explain",): ["read"],
    ("lint",): [],
    ("serve",): ["--upstream", "http://127.0.0.1:1"],
    ("transform", "outbound"): [],
    ("transform", "inbound"): [],
    ("transform", "stream"): [],
    ("pin", "capture"): ["a@1", "agent"],
    ("pin", "import"): ["request.json", "--name", "a@1"],
    ("pin", "list"): [],
    ("pin", "show"): ["a@1"],
    ("pin", "diff"): ["a@1", "a@2"],
    ("pin", "check"): ["a.json"],
    ("keys", "new"): ["team-a"],
    ("keys", "list"): [],
    ("keys", "revoke"): ["team-a"],
    ("lsp",): [],
    ("schema",): [],
}


def leaves(group: click.Group, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from leaves(command, (*path, name))
        else:
            yield (*path, name), command


ROOT = click_command()
assert isinstance(ROOT, click.Group)
COMMANDS = dict(leaves(ROOT))


def test_the_table_names_every_command() -> None:
    assert sorted(COMMANDS) == sorted(ARGV)


@pytest.mark.parametrize("path", sorted(ARGV), ids=" ".join)
def test_every_command_is_declared_to_return_its_status(path: tuple[str, ...]) -> None:
    body = inspect.unwrap(COMMANDS[path].callback)
    assert body.__annotations__["return"] == "int"
    assert "typer.Exit" not in inspect.getsource(body)


@pytest.mark.parametrize("path", sorted(ARGV), ids=" ".join)
@pytest.mark.parametrize("status", [0, 1, 2, 3])
def test_a_returned_status_is_the_exit_status(
    path: tuple[str, ...], status: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(COMMANDS[path], "callback", lambda **_: status)
    assert main([*path, *ARGV[path]]) == status


@pytest.mark.parametrize("path", sorted(ARGV), ids=" ".join)
def test_a_command_error_prints_its_lines_and_exits_with_its_code(
    path: tuple[str, ...], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def stop(**_: Any) -> int:
        raise CommandError("bridge-rules: error: first", "  second", code=1)

    monkeypatch.setattr(COMMANDS[path], "callback", stop)
    assert main([*path, *ARGV[path]]) == 1
    assert capsys.readouterr().err == "bridge-rules: error: first\n  second\n"


@pytest.mark.parametrize(
    ("body", "shown"),
    [
        (lambda **_: None, "TypeError: the command returned None, not an exit status"),
        (lambda **_: {}["key"], "KeyError: 'key'"),
    ],
    ids=["no status", "a bug"],
)
def test_anything_else_is_an_internal_error_in_one_line(
    body: Any,
    shown: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("BRIDGE_RULES_DEBUG", raising=False)
    monkeypatch.setattr(COMMANDS[("codes",)], "callback", body)
    assert main(["codes"]) == 3
    err = capsys.readouterr().err
    assert err.splitlines()[0] == f"bridge-rules: internal error: {shown}"
    assert "Traceback" not in err
    monkeypatch.setenv("BRIDGE_RULES_DEBUG", "1")
    with pytest.raises((TypeError, KeyError)):
        main(["codes"])


def test_typer_keeps_its_own_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", "--no-such-option"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("Usage: bridge-rules lint [OPTIONS]")
    assert "No such option" in err
    assert main(["--version"]) == 0
    assert main(["lint", "-h"]) == 0
