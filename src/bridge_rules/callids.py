"""Tool-use ids the target accepts, made from the ids an agent's history holds.

A history may hold ids another upstream made: an OpenAI-compatible or Kimi endpoint
answers with ids such as ``functions.Bash:0``, and some gateways make ids longer than
Bedrock's 64 characters. The agent sends them back unchanged, and the target refuses the
whole request (``tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'``), on
every later turn of the conversation.

:func:`wire_id` makes such an id valid, and leaves every valid id alone:

* it is a function of the id and the target alone, so the ``tool_use`` and the
  ``tool_result`` that answers it get the same id, on any worker, in every request that
  replays them, and nothing is remembered;
* the new id keeps the characters of the original that the target accepts (``.`` and
  ``:`` become ``_``), then ``_bri`` and 16 base32 characters of the SHA-256 of the
  original: two ids that clean to the same text stay apart, and the result is never
  itself an id the agent could have sent unchanged with another meaning (an id that
  already matches is never rewritten, and the suffix makes a collision with one a
  2^-80 event);
* when the target caps the length, the cleaned part is cut first, so the suffix stays.

Only the outbound request is rewritten: the agent's history keeps its own ids, so the
answer's ids (made by the upstream, in the target's own form) and the agent's pairing
of calls and results are unchanged (docs/transform.md, "Tool-use ids").
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

MARK = "_bri"
_HASH_CHARS = 16  # 80 bits of base32
_BAD = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True, slots=True)
class IdRule:
    """What a target accepts as a ``tool_use`` id: ``^[a-zA-Z0-9_-]+$``, at most ``max_len``."""

    target: str
    max_len: int | None
    """None: no documented cap (Anthropic accepts ids of 128 characters and more)."""
    source: str
    """Where the rule is documented or observed, for ``explain`` and the docs."""

    def valid(self, value: str) -> bool:
        return self.matcher()(value) is not None

    def matcher(self) -> Callable[[str], object]:
        """One C call that is not None exactly for a valid id: the history walk checks every
        ``tool_use`` id and ``tool_result`` ``tool_use_id`` with it (issue 36)."""
        return _matcher(self.max_len)

    def seen(self) -> set[str]:
        """Ids this process already found valid under this rule (at most ``SEEN_CAP``, then
        forgotten): a history sends the same ids every turn, and a set lookup costs a
        tenth of the match. Only valid ids go in, so membership answers ``valid``."""
        return _seen(self.max_len)

    def remember(self, value: str) -> None:
        seen = _seen(self.max_len)
        if len(seen) >= SEEN_CAP:
            seen.clear()
        seen.add(value)


SEEN_CAP = 1 << 16
"""Valid ids remembered per rule before the memory starts again (``IdRule.seen``)."""


@cache
def _seen(max_len: int | None) -> set[str]:
    return set()


@cache
def _matcher(max_len: int | None) -> Callable[[str], object]:
    count = "+" if max_len is None else f"{{1,{max_len}}}"
    return re.compile(f"[A-Za-z0-9_-]{count}").fullmatch


RULES: dict[str, IdRule] = {
    rule.target: rule
    for rule in (
        IdRule(
            "anthropic",
            None,
            "Messages API error 'String should match pattern ^[a-zA-Z0-9_-]+$'",
        ),
        IdRule(
            "bedrock",
            64,
            "Converse toolUseId: 1-64 characters; Claude on Bedrock also takes Anthropic's set",
        ),
        IdRule(
            "openai-strict",
            40,
            "Chat Completions tool_calls[].id: at most 40 characters",
        ),
    )
}
DEFAULT_TARGET = "anthropic"


def id_rule(target: str | None = None) -> IdRule:
    """The id rule of a schema target; a target with no rule of its own takes Anthropic's
    (the request is an Anthropic Messages body whatever serves it)."""
    return RULES.get(target or DEFAULT_TARGET, RULES[DEFAULT_TARGET])


def _digest(value: str) -> str:
    raw = hashlib.sha256(value.encode("utf-8", "surrogatepass")).digest()
    return base64.b32encode(raw).decode("ascii")[:_HASH_CHARS].lower()


def wire_id(value: str, rule: IdRule | None = None) -> str:
    """``value`` when the target accepts it, else a valid id derived from it alone."""
    rule = rule or RULES[DEFAULT_TARGET]
    if rule.valid(value):
        return value
    suffix = MARK + _digest(value)
    cleaned = _BAD.sub("_", value)
    if rule.max_len is not None:
        cleaned = cleaned[: max(rule.max_len - len(suffix), 0)]
    return cleaned + suffix
