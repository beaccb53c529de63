"""The ``models:`` section of the rule format: what each upstream model accepts.

Entries are keyed by a model-id glob (``claude-opus-5-*``). Each says what to do with a part
of a request that model refuses, instead of letting the upstream's 400 reach the user in the
middle of a session (docs/models.md). Every field is optional: an entry only decides what it
names, and a later entry (a later file, or a route's own rules) overlays it field by field.
:mod:`bridge_rules.model` re-exports these names and :class:`~bridge_rules.model.RuleFile`
holds the section.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from bridge_rules.model_stages import Strict

ForcedChoice = Literal["keep", "auto", "refuse"]
KeepStrip = Literal["keep", "strip"]
SystemInMessages = Literal["keep", "fold", "user"]


class ToolChoiceRule(Strict):
    """A forced ``tool_choice`` (``{"type": "any"}`` or ``{"type": "tool", "name": ...}``)."""

    forced: ForcedChoice | None = Field(
        None,
        description="Send it as is (`keep`); send `auto` and add a short instruction naming "
        "the tool (or asking for a tool) to the system prompt (`auto`); or answer the client "
        "400 before anything is sent (`refuse`).",
    )


class ThinkingRule(Strict):
    """Thinking blocks in the history, and ``thinking: {"type": "disabled"}``."""

    foreign: KeepStrip | None = Field(
        None,
        description="A thinking block another model produced (the proxy marks each block's "
        "signature with its model on the way back, and reads the mark when the client sends "
        "it again): replay it (`keep`) or leave it out (`strip`).",
    )
    unknown: KeepStrip | None = Field(
        None,
        description="A thinking block with no mark (produced before the proxy, or through "
        "another one), whose model cannot be known: replay it (`keep`) or leave it out (`strip`).",
    )
    disabled: Literal["keep"] | dict[str, Any] | None = Field(
        None,
        description='`thinking: {"type": "disabled"}`: send it as is (`keep`), or the '
        "object to send instead, e.g. `{type: adaptive}`.",
    )


class ModelEntry(Strict):
    """What one model (or every model a glob matches) accepts, and where that is written."""

    tool_choice: ToolChoiceRule | None = None
    thinking: ThinkingRule | None = None
    system_in_messages: SystemInMessages | None = Field(
        None,
        description='`{"role": "system"}` messages inside `messages[]`: send them as they are '
        "(`keep`), fold their text into the top-level `system` in order (`fold`), or send them "
        "as user turns marked as system text (`user`).",
    )
    display_name: str | None = Field(
        None, description="The name `GET /v1/models` shows (an exact id's entry only)."
    )
    created_at: str | None = Field(
        None, description="RFC 3339 release time `GET /v1/models` shows (an exact id's entry only)."
    )
    sources: dict[str, str] = Field(
        default_factory=dict,
        description="Constraint (e.g. `tool_choice.forced`) -> where it is documented.",
    )
    capabilities: dict[str, Any] | None = Field(
        None,
        description="The model's `capabilities` as the Models API answered them "
        "(`ModelInfo.capabilities`); recorded by `pin capture --models`, compared by `drift`.",
    )


__all__ = [
    "ForcedChoice",
    "KeepStrip",
    "ModelEntry",
    "SystemInMessages",
    "ThinkingRule",
    "ToolChoiceRule",
]
