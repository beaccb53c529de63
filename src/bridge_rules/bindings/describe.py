"""The tool description sent with a bound tool, so what the model reads agrees with the schema.

A binding that swaps a tool's schema (``canonical``, ``hybrid``) used to send the agent's
description beside the wire schema: pi's ``edit`` went out as ``Edit`` with
``old_string``/``new_string`` in its schema, and a description telling the model to fill
``edits[].oldText``. Two remedies, chosen per binding (``wire_description``):

* the wire tool's own description, from the pin (``pin capture`` records descriptions):
  the text the model was trained to read beside exactly that schema. ``auto`` prefers it.
  It promises the wire tool's results (Claude Code's Read numbers lines as ``cat -n``), so
  the binding's ``output:`` operations reshape the agent's results to match;
* the agent's description with the fields the binding renames written as the model sees
  them (``edits[].oldText`` -> ``old_string``), when the pin has no description: it is then
  the only account of what the agent's tool does (its limits, its truncation), and the
  results stay as the agent made them, which is what it describes.

Only names that cannot be ordinary words are rewritten: with a capital inside, an
underscore, a dot or brackets (``oldText``, ``file_path``, ``edits[].oldText``), so the
English word "path" in a description is never turned into ``file_path``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from bridge_rules.pins import Pin

Rename = Callable[[str], str]
_FIELD_LIKE = re.compile(r".[A-Z]|[_.\[]")


def field_renamer(spellings: Iterable[tuple[str, str]]) -> Rename | None:
    """The function that writes each local field name of ``spellings`` as the wire's (compiled
    once, at load); None when no name could be told from an ordinary word."""
    table = {
        local: wire
        for local, wire in spellings
        if local != wire and _FIELD_LIKE.search(local) is not None
    }
    if not table:
        return None
    names = sorted(table, key=len, reverse=True)  # edits[].oldText before oldText
    pattern = re.compile(
        r"(?<![\w.\[\]])(?:" + "|".join(map(re.escape, names)) + r")(?![\w\[])", re.ASCII
    )
    return lambda text: pattern.sub(lambda m: table[m.group(0)], text)


@dataclass(frozen=True)
class Description:
    """What goes out as a bound tool's description."""

    fixed: str | None
    """Sent whatever the agent wrote (the pin's or the rule's text); None: the agent's own."""
    rewrite: Rename | None
    """Applied to the agent's own description (None: sent as written)."""
    source: str
    """Where it comes from, as ``explain`` says it."""

    @property
    def promises_output(self) -> bool:
        """Whether results must take the shape another text promised (``output:`` applies)."""
        return self.fixed is not None

    def text(self, local: object) -> object:
        if self.fixed is not None:
            return self.fixed
        if self.rewrite is not None and isinstance(local, str):
            return self.rewrite(local)
        return local


def plan_description(
    mode: str, schema: str, wire: str, pin: Pin | None, rewrite: Rename | None
) -> Description:
    """The description a binding sends (``wire_description: mode``), decided once at load."""
    if mode == "local" or (mode == "auto" and schema == "passthrough"):
        return Description(None, None, "the agent's own")
    if mode not in ("auto", "pin"):
        return Description(mode, None, "the rule's text")
    pinned = pin.descriptions.get(wire) if pin is not None else None
    if pinned:
        assert pin is not None
        return Description(pinned, None, f"{wire}'s own, from the pin {pin.spec}")
    if rewrite is None:
        return Description(None, None, "the agent's own (the pin has no description)")
    return Description(
        None, rewrite, "the agent's own, field names as the schema has them (no pinned text)"
    )
