"""The rule-file format, as strict pydantic models. No I/O here.

A rule file is versioned (``bridge-rules: 1``). Unknown keys are errors, every
model is frozen, and stages are a discriminated union on ``kind`` so an error
names exactly one alternative.

The stages, ``inbound:`` and the strict base are declared in :mod:`bridge_rules.model_stages`
and the binding and repair formats in :mod:`bridge_rules.model_bindings`; this module holds
the other sections and :class:`RuleFile`, and re-exports every name (``__all__``).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BeforeValidator, Field
from pydantic_core import PydanticCustomError

from bridge_rules.model_bindings import Binding, Repair
from bridge_rules.model_stages import (
    AliasStage,
    BindingsStage,
    CanonicalStage,
    Case,
    Inbound,
    PassthroughStage,
    PrefixStage,
    PrefixStrip,
    ReverseScope,
    Stage,
    Strict,
    SuffixStrip,
)
from bridge_rules.model_wire import ModelEntry, ThinkingRule, ToolChoiceRule

SchemaTarget = Literal["anthropic", "openai-strict", "gemini", "bedrock", "none"]
SchemaOperation = Literal[
    "inline-refs",
    "upgrade-draft4",
    "flatten-root-union",
    "root-object",
    "merge-allof",
    "oneof-to-anyof",
    "const-to-enum",
    "enum-as-strings",
    "nullable-keyword",
    "untyped-as-json",
    "open-maps-as-json",
    "close-objects",
    "require-all",
    "describe-refused",
]


# --------------------------------------------------------------------- gate
class GateEnv(Strict):
    """Environment variables that override the gate (checked before anything else)."""

    disable: str | None = Field(
        None, description="Variable that closes the gate when set to `value`."
    )
    force: str | None = Field(None, description="Variable that opens the gate when set to `value`.")
    value: str = Field("1", description="The exact value that triggers an override.")
    force_skips: Literal["model", "all"] = Field(
        "model",
        description="What a forced gate skips: only the model check (`model`), or the api check "
        "as well (`all`, pi-anthropic-messages 0.3.2).",
    )


class Gate(Strict):
    """When the rules apply. Absent checks always pass; a missing gate is always open."""

    api: str | list[str] | None = Field(
        None, description="Required `api` value (or any of a list)."
    )
    model: str | None = Field(
        None, description="Python regex searched in the model id; `(?i)` makes it case-insensitive."
    )
    env: GateEnv | None = None


# ------------------------------------------------------------- wire names
class WireNames(Strict):
    """What happens to a tool name the API would reject, and to two tools under one name."""

    max_length: int = Field(
        64, ge=1, le=1024, description="The longest wire name allowed (the API allows 64)."
    )
    on_invalid: Literal["error", "shorten", "pass"] = Field(
        "error",
        description="A wire name longer than `max_length` or with characters outside "
        "`a-zA-Z0-9_-`: fail the request with a 400 that names the tool (`error`), send a "
        "deterministic short name that maps back (`shorten`), or send it as is (`pass`).",
    )
    on_collision: Literal["error", "first"] = Field(
        "error",
        description="Two tools of one request under one wire name: fail the request with a "
        "400 (`error`), or send the first and drop the others (`first`).",
    )


class SchemaRules(Strict):
    """How tool schemas are converted for the API that receives them (docs/schemas.md)."""

    target: SchemaTarget | None = Field(
        None,
        description="The API whose schema rules every tool's `input_schema` is made to meet; "
        "`none`: only the listed `operations`. Default: `anthropic`, or only `operations` "
        "when they are given without a target.",
    )
    operations: list[SchemaOperation] = Field(
        default_factory=list,
        description="Operations applied after the target's own (or instead of a target).",
    )
    ref_depth: int = Field(
        3, ge=1, le=16, description="How many times one `$ref` may be inlined within itself."
    )
    lint_targets: list[Literal["anthropic", "openai-strict", "gemini", "bedrock"]] = Field(
        default_factory=list,
        description="More APIs `lint` checks the pinned tools' schemas against (as "
        "`lint --target` does), reporting what each would reject.",
    )


# ----------------------------------------------------------------- bindings
# Binding (argument translation) and Repair live in model_bindings; re-exported here.


# -------------------------------------------------------------------- text
class TextRule(Strict):
    find: str
    replace: str
    regex: bool = False


class TextRules(Strict):
    system: list[TextRule] = Field(default_factory=list)
    recover_tool_calls: bool = Field(
        False,
        description='Turn a `<tool_call>{"name": ..., "arguments": ...}</tool_call>` a model '
        "wrote as text in a response or a stream into a real `tool_use` block (pi-flows); "
        "only for registered tools.",
    )


# ----------------------------------------------------------------- filters
class Filters(Strict):
    drop: list[str] = Field(default_factory=list, description="Local tool names never sent.")
    dedup_bridged: bool = Field(
        False,
        description="Drop `mcp__<server>__<x>` tools whose base name a direct tool already has.",
    )
    capabilities: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Capability -> the local tool names that have it (compared "
        "case-insensitively), e.g. `write: [write, edit]`, `exec: [bash]`.",
    )
    deny: list[str] = Field(
        default_factory=list,
        description="Capabilities whose tools are never sent, e.g. `[write, exec]` for a "
        "read-only session.",
    )


# ------------------------------------------------------------------ policy
class Policy(Strict):
    """Which tools an agent may be given and may call (docs/policy.md)."""

    allow: list[str] | None = Field(
        None,
        description="Glob patterns of the only tools that may pass, matched against local and "
        "wire names; when given, it is exhaustive.",
    )
    deny: list[str] = Field(
        default_factory=list,
        description="Glob patterns of tools that never pass (local or wire name); deny wins.",
    )
    trusted_servers: list[str] | None = Field(
        None,
        description="MCP servers whose `mcp__<server>__*` tools may pass; when given, the tools "
        "of every other MCP server are denied.",
    )
    switches: list[str] = Field(
        default_factory=list,
        description="Named capability switches turned on, e.g. `[read_only, no_exec]` "
        "(defined in `switch_table`; the packaged `capabilities` profile has Orion's).",
    )
    switch_table: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Switch name -> the tool name patterns it denies.",
    )
    on_denied: Literal["text", "error", "drop"] = Field(
        "text",
        description="A call to a denied tool in a response: replaced by a text block that "
        "says so (`text`), the whole response refused (`error`) or removed (`drop`).",
    )


# --------------------------------------------------------------- debug log
class DebugLogSetting(Strict):
    """Where the environment names a debug log, as a peer's own variable does."""

    env: str = Field(
        description="Variable whose value, when set and not empty, is the file `serve` and "
        "the compatibility API append the debug log to (the same log as `--debug-log FILE`: "
        "owner-only, credentials redacted, prompt text omitted)."
    )


class Suppression(Strict):
    code: str
    reason: str
    match: str | None = Field(None, description="Only findings whose message contains this text.")


# ------------------------------------------------------------------- file
def _exact_version(value: object) -> object:
    """``Literal[1]`` also admits ``true`` and ``1.0`` (they compare equal to 1): refuse them."""
    if type(value) is not int:
        raise PydanticCustomError("literal_error", "Input should be {expected}", {"expected": "1"})
    return value


class RuleFile(Strict):
    """One rule file. Several files compose: later ones overlay earlier ones."""

    version: Annotated[Literal[1], BeforeValidator(_exact_version)] = Field(
        alias="bridge-rules",
        description="The rule format's version: `1`. Also how discovery tells a rule file.",
    )
    name: str | None = Field(None, description="A name for this rule set, shown by `explain`.")
    description: str | None = Field(None, description="What these rules are for, in prose.")
    extends: str | list[str] | None = Field(
        None, description="Profiles (by name) or files (relative paths) this file builds on."
    )
    pin: str | None = Field(None, description="Claude Code schema pin, e.g. `claude-code@2.1.330`.")
    local_pin: str | None = Field(None, description="Local agent schema pin, e.g. `pi@0.73.1`.")
    local_tools: list[str] = Field(
        default_factory=list, description="Local tool names the rules should know about."
    )
    gate: Gate | None = Field(
        None, description="When the rules apply at all: API, model id, environment switches."
    )
    names: list[Stage] | None = Field(
        None,
        description="Stages that turn a local tool name into its wire name; first match wins.",
    )
    inbound: Inbound | None = Field(
        None, description="How a wire name the model calls maps back to a local tool."
    )
    wire_names: WireNames | None = Field(
        None,
        description="What happens to a tool name the API would reject, and to two tools "
        "under one name.",
    )
    schemas: SchemaRules | None = Field(
        None, description="Tool schemas rewritten for a target API (`anthropic`, `gemini`, ...)."
    )
    bindings: list[Binding] | None = Field(
        None, description="Local tools bound to wire tools, with argument operations."
    )
    repair: list[Repair] | None = Field(
        None, description="Argument repair for local tools (aliases, coercion, shorthand)."
    )
    text: TextRules | None = Field(
        None,
        description="Rewrites of the system prompt's text, and tool calls a model wrote as "
        "text made real.",
    )
    filters: Filters | None = Field(
        None, description="Local tools never sent, and bridged duplicates dropped."
    )
    policy: Policy | None = Field(
        None, description="Which tools may pass: allow and deny patterns, named switches."
    )
    debug_log: DebugLogSetting | None = Field(
        None, description="The environment variable that names a debug log file."
    )
    models: dict[str, ModelEntry] | None = Field(
        None,
        description="Model-id glob -> what that model accepts (docs/models.md); later files "
        "overlay an entry field by field.",
    )
    suppress: list[Suppression] = Field(
        default_factory=list,
        description="Lint findings silenced in this file: `{code, reason, match}` each.",
    )

    def extends_list(self) -> list[str]:
        if self.extends is None:
            return []
        return [self.extends] if isinstance(self.extends, str) else list(self.extends)


__all__ = [
    "AliasStage",
    "Binding",
    "BindingsStage",
    "CanonicalStage",
    "Case",
    "DebugLogSetting",
    "Filters",
    "Gate",
    "GateEnv",
    "Inbound",
    "ModelEntry",
    "PassthroughStage",
    "Policy",
    "PrefixStage",
    "PrefixStrip",
    "Repair",
    "ReverseScope",
    "RuleFile",
    "SchemaOperation",
    "SchemaRules",
    "SchemaTarget",
    "Stage",
    "Strict",
    "SuffixStrip",
    "Suppression",
    "TextRule",
    "TextRules",
    "ThinkingRule",
    "ToolChoiceRule",
    "WireNames",
]
