"""The rule-file format, as strict pydantic models. No I/O here.

A rule file is versioned (``bridge-rules: 1``). Unknown keys are errors, every
model is frozen, and stages are a discriminated union on ``kind`` so an error
names exactly one alternative.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from bridge_rules.model_bindings import Binding, Repair

Case = Literal["exact", "insensitive"]
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
ReverseScope = Literal["registered", "always", "none"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, populate_by_name=True)


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


# ------------------------------------------------------------------- stages
class _Stage(Strict):
    id: str | None = Field(None, description="Stable name; overlays merge stages by id.")
    description: str | None = None
    enabled: bool = True


class CanonicalStage(_Stage):
    """Names that are already canonical wire tools go out as the canonical spelling."""

    kind: Literal["canonical"]
    from_pin: bool = Field(False, description="Take the names from the pinned Claude Code version.")
    include_declared: bool = Field(
        False,
        description="With `from_pin`: also take the names only the pin's type declarations "
        "list (tools no runtime capture of that version saw the binary send).",
    )
    names: list[str] = Field(default_factory=list, description="Explicit canonical names.")
    case: Case = "exact"
    reverse: ReverseScope = "registered"

    @model_validator(mode="after")
    def _needs_names(self) -> CanonicalStage:
        if self.enabled and not self.from_pin and not self.names:
            raise ValueError("a canonical stage needs `from_pin: true` or a `names` list")
        return self


class PassthroughStage(_Stage):
    """Names matching a prefix, a pattern or a list go out unchanged."""

    kind: Literal["passthrough"]
    prefix: str | None = None
    pattern: str | None = Field(None, description="Python regex matched at the start of the name.")
    names: list[str] = Field(default_factory=list)
    case: Case = "exact"
    reverse: ReverseScope = "registered"

    @model_validator(mode="after")
    def _needs_matcher(self) -> PassthroughStage:
        if self.enabled and self.prefix is None and self.pattern is None and not self.names:
            raise ValueError("a passthrough stage needs a `prefix`, a `pattern` or `names`")
        return self


class AliasStage(_Stage):
    """A table of local name -> wire name."""

    kind: Literal["aliases", "capitalize"]
    map: dict[str, str] = Field(default_factory=dict)
    case: Case = "insensitive"
    reverse: ReverseScope = Field(
        "registered",
        description="Inverse entries only for registered local names (`registered`), for every "
        "entry of the table (`always`), or none.",
    )
    inverse: dict[str, str] = Field(
        default_factory=dict,
        description="Explicit wire -> local entries; they win over derived inverses.",
    )


class PrefixStage(_Stage):
    """The catch-all: prepend a prefix (e.g. `mcp__pi__`) to the name as written."""

    kind: Literal["prefix"]
    value: str | None = Field(None, description="The prefix; required unless disabled.")
    case: Case = Field("exact", description="How an inbound name is matched against the prefix.")
    reverse: ReverseScope = Field(
        "registered",
        description="`registered`: only registered names map back; `always`: any name with the "
        "prefix maps back to the name with the prefix stripped.",
    )
    inverse_for: Literal["resolved", "unclaimed"] = Field(
        "resolved",
        description="`resolved`: inverse entries for the names this stage renamed; `unclaimed`: "
        "also for registered names an earlier canonical stage passed through "
        "(pi-anthropic-messages' reverse map does this).",
    )

    @model_validator(mode="after")
    def _needs_value(self) -> PrefixStage:
        # Optional only so an overlay can write `{kind: prefix, enabled: false}`.
        if self.enabled and self.value is None:
            raise ValueError("a prefix stage needs a `value` (the prefix to add)")
        return self


class BindingsStage(_Stage):
    """Consult the `bindings` section (local tool <-> wire tool, with arguments)."""

    kind: Literal["bindings"]
    case: Case = "exact"


Stage = Annotated[
    CanonicalStage | PassthroughStage | AliasStage | PrefixStage | BindingsStage,
    Field(discriminator="kind"),
]


# ------------------------------------------------------------------ inbound
class SuffixStrip(Strict):
    suffix: str
    case: Case = "exact"


class PrefixStrip(Strict):
    prefix: str | None = Field(None, description="The literal prefix to strip.")
    pattern: str | None = Field(
        None,
        description="Instead of `prefix`: a regular expression (RE2) matched at the start of "
        "the name; what it matches is stripped (`mcp__[^_]+__`: any one MCP server prefix).",
    )
    case: Case = Field("exact", description="How `prefix` is compared; a `pattern` says its own.")

    @model_validator(mode="after")
    def _one_of(self) -> PrefixStrip:
        if (self.prefix is None) == (self.pattern is None):
            raise ValueError("a prefix strip needs exactly one of `prefix` and `pattern`")
        return self


class Inbound(Strict):
    """How wire names coming back are turned into local names."""

    case: Case = Field("insensitive", description="Fall back to a case-insensitive lookup.")
    strip_suffixes: list[str | SuffixStrip] = Field(
        default_factory=list,
        description="Suffixes a gateway appends (e.g. `_ide`); stripped once, then looked up.",
    )
    strip_prefixes: list[str | PrefixStrip] = Field(
        default_factory=list,
        description="Prefixes a gateway puts in front (e.g. `proxy_`); when the name does not "
        "map, each is stripped and the rest looked up again.",
    )
    collapse_doubled_prefixes: bool = Field(
        False,
        description="When the name does not map, a prefix the rules know (prefix and "
        "passthrough stages, `strip_prefixes`) written twice in a row is written once "
        "(`mcp__pi__mcp__pi__x` -> `mcp__pi__x`), and the rest looked up again.",
    )
    match_registered: Literal["none", "exact", "insensitive"] = Field(
        "none",
        description="When the name does not map, compare it with the request's own registered "
        "local names: as written (`exact`) or ignoring case (`insensitive`: `My_Tool` -> "
        "`my_tool`, only when one registered name matches).",
    )
    unmapped: Literal["pass", "warn", "error"] = Field(
        "pass",
        description="A tool call whose name maps to no registered tool: passed on as it is "
        "(`pass`), passed on and reported (`warn`: a log line, the proxy's "
        "`x-bridge-rules-unmapped` header and counter), or turned into a text block the agent "
        "can read (`error`).",
    )
    agent_dispatch: Literal["exact", "lowercase"] = Field(
        "exact",
        description="How the agent finds the tool for a call's name: only a tool of exactly "
        "that name (`exact`: pi), or, when it has none, the name lower-cased "
        "(`lowercase`: opencode 1.18.33 repairs `BASH` to `bash`). The policy judges every "
        "name the agent may run (docs/policy.md).",
    )

    def suffixes(self) -> list[SuffixStrip]:
        return [
            s if isinstance(s, SuffixStrip) else SuffixStrip(suffix=s) for s in self.strip_suffixes
        ]

    def prefixes(self) -> list[PrefixStrip]:
        return [
            s if isinstance(s, PrefixStrip) else PrefixStrip(prefix=s) for s in self.strip_prefixes
        ]


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

    version: Annotated[Literal[1], BeforeValidator(_exact_version)] = Field(alias="bridge-rules")
    name: str | None = None
    description: str | None = None
    extends: str | list[str] | None = Field(
        None, description="Profiles (by name) or files (relative paths) this file builds on."
    )
    pin: str | None = Field(None, description="Claude Code schema pin, e.g. `claude-code@2.1.330`.")
    local_pin: str | None = Field(None, description="Local agent schema pin, e.g. `pi@0.73.1`.")
    local_tools: list[str] = Field(
        default_factory=list, description="Local tool names the rules should know about."
    )
    gate: Gate | None = None
    names: list[Stage] | None = None
    inbound: Inbound | None = None
    wire_names: WireNames | None = None
    schemas: SchemaRules | None = None
    bindings: list[Binding] | None = None
    repair: list[Repair] | None = Field(
        None, description="Argument repair for local tools (aliases, coercion, shorthand)."
    )
    text: TextRules | None = None
    filters: Filters | None = None
    policy: Policy | None = None
    debug_log: DebugLogSetting | None = None
    suppress: list[Suppression] = Field(default_factory=list)

    def extends_list(self) -> list[str]:
        if self.extends is None:
            return []
        return [self.extends] if isinstance(self.extends, str) else list(self.extends)
