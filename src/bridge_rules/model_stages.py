"""The ``names:`` stages and the ``inbound:`` section of the rule format (the names'
way out and back), and the strict base every model shares.

Stages are a discriminated union on ``kind``, so an error names exactly one alternative;
:mod:`bridge_rules.model` re-exports every name here, and its :class:`RuleFile` holds them.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Case = Literal["exact", "insensitive"]
ReverseScope = Literal["registered", "always", "none"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, populate_by_name=True)


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
