"""Run a stripped trailing pipeline (``| grep FAIL | head -5``) over a tool's output, in Python.

pi-tool-guard strips trailing extractors from a bash command, runs the rest and then
applies the extractors to the output. The proxy may run on another host than the
agent, so it never executes them: the stages are reimplemented here, exactly as GNU
coreutils and GNU grep behave under ``LC_ALL=C`` (bytes, byte order, ASCII case).

The strip step asks :func:`stage_for` before it removes a stage, so a stage is only
ever stripped when it is reproduced here exactly; that is why :func:`run_pipeline`
never fails on a pipeline the strip step made. The output is what a ``2>&1`` capture
of the real pipeline shows: a stage's diagnostics (only grep's binary-input notice)
and then the last stage's output, decoded as UTF-8 the way the agent decodes it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache, partial

from bridge_rules.repair import coreutils
from bridge_rules.repair.grep import grep
from bridge_rules.repair.stage import Stage, Unsupported
from bridge_rules.repair.tr import tr
from bridge_rules.repair.words import shell_words

Builder = Callable[[list[str]], Stage]

BUILDERS: dict[str, Builder] = {
    "head": coreutils.head,
    "tail": coreutils.tail,
    "grep": partial(grep, "grep"),
    "egrep": partial(grep, "egrep"),
    "fgrep": partial(grep, "fgrep"),
    "wc": coreutils.wc,
    "sort": coreutils.sort,
    "uniq": coreutils.uniq,
    "cut": coreutils.cut,
    "tr": tr,
    "less": coreutils.pager,
    "more": coreutils.pager,
}
"""The commands reproduced here; any other command stays in the agent's command."""


@lru_cache(maxsize=512)
def stage_for(source: str) -> Stage | None:
    """The stage a command's source text runs, or None when it is not reproduced exactly."""
    words = shell_words(source)
    if not words or words[0] not in BUILDERS:
        return None
    try:
        return BUILDERS[words[0]](words[1:])
    except (Unsupported, UnicodeEncodeError):  # a lone surrogate is no byte a shell passes
        return None


def run_pipeline(commands: Sequence[str], text: str) -> str | None:
    """``text`` through every command in order, or None when one is not reproduced here."""
    stages = [stage_for(command) for command in commands]
    data = text.encode("utf-8", "surrogatepass")
    errors = b""
    for stage in stages:
        if stage is None:
            return None
        data, err = stage(data)
        errors += err
    return (errors + data).decode("utf-8", "replace")
