"""Trailing extractor commands (``| head -5``) found with a real shell parser (bashlex).

Follows pi-tool-guard 0.2.1's ``pipeline.ts``: only the first statement is
inspected; inside an ``&&``/``||`` chain the last element must be a pipeline of
at least two commands; the first command is never removed. The cleaned command
is the source up to the end of the last kept command, so text after the first
statement is dropped (pi-tool-guard's documented flaw).

One deliberate difference: walking back from the last command, a stage is
stripped only while it is named in the set *and* the proxy reproduces it exactly
(:func:`~bridge_rules.repair.extract.stage_for`: every option and pattern
understood). The first stage that fails stops the walk, so it and everything
before it run in the agent: ``cmd | sed s/a/b/ | head -5`` loses only ``head -5``.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from bridge_rules.repair.extract import stage_for

_STATEMENT_SEPARATORS = {";", "&", "\n"}
# bashlex is a pure-Python parser: a long or deeply substituted command costs it
# seconds. Commands a model writes are short; past these bounds nothing is stripped
# (the command runs as written, which is what a missing rule would do too).
MAX_COMMAND_CHARS = 4096
MAX_SUBSTITUTIONS = 32


@dataclass(frozen=True)
class Stripped:
    cleaned: str
    removed: str
    """The removed commands' source joined with ``" | "``."""
    commands: tuple[str, ...] = ()
    """The removed commands' source, one a command, in pipeline order."""


def _first_statement_tail(node: Any) -> Any:
    """The last and/or element of the first statement, or None."""
    if node.kind != "list":
        return node
    element = None
    for part in node.parts:
        if part.kind == "operator":
            if part.op in _STATEMENT_SEPARATORS:
                break
            continue
        element = part
    return element


def _command_name(command: Any) -> str | None:
    for part in command.parts:
        if part.kind == "word":
            return str(part.word)
        if part.kind not in ("assignment", "redirect"):
            return None
    return None


def strip_extractors(command: str, extractors: Collection[str]) -> Stripped | None:
    """The command without its trailing extractors, or None when nothing is stripped.

    Every stripped stage is one :func:`~bridge_rules.repair.extract.run_pipeline` runs.

    None as well for a command longer than ``MAX_COMMAND_CHARS`` or with more than
    ``MAX_SUBSTITUTIONS`` command substitutions: parsing it would take too long.
    """
    if len(command) > MAX_COMMAND_CHARS or (
        command.count("$(") + command.count("`") > MAX_SUBSTITUTIONS
    ):
        return None
    try:
        import bashlex

        trees = bashlex.parse(command)
    except Exception:  # bashlex raises its own errors and plain ones on odd input
        return None
    if not trees:
        return None
    tail = _first_statement_tail(trees[0])
    if tail is None or tail.kind != "pipeline":
        return None
    commands = [p for p in tail.parts if p.kind != "pipe"]
    if len(commands) < 2:
        return None
    keep = len(commands)
    while keep > 1:
        cmd = commands[keep - 1]
        if cmd.kind != "command" or _command_name(cmd) not in extractors:
            break
        if stage_for(command[cmd.pos[0] : cmd.pos[1]]) is None:
            break
        keep -= 1
    if keep == len(commands):
        return None
    cleaned = command[: commands[keep - 1].pos[1]].strip()
    parts = tuple(command[c.pos[0] : c.pos[1]] for c in commands[keep:])
    return Stripped(cleaned, " | ".join(parts), parts)
