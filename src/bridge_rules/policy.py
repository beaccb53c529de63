"""``policy:`` compiled once: which tools may be sent and called, and which rule decided.

Filters (``filters:``) shape what is sent; a policy is a boundary. A denied tool is taken
out of ``tools[]``, a ``tool_choice`` forcing it is refused, and a call to it in an
answer is handled by ``on_denied`` (:mod:`bridge_rules.transform.unmapped`), so a model
that ignores ``tools[]`` still cannot hand the agent a denied call.

Patterns are globs matched case-sensitively against a tool's local and wire names (a
call in an answer is judged under every name it can stand for:
:mod:`bridge_rules.calljudge`). Deny wins (``deny``, the switches turned on, then
``trusted_servers``, which trusts an MCP name only when every server it may belong to is
trusted, :mod:`bridge_rules.mcpnames`); a given ``allow`` is exhaustive. Every decision
names its rule and where it was written, for the 400 a forced denied tool gets, the log
line of a denied call and ``explain``.

A request may narrow the rules' policy with more switches (``x-bridge-rules-policy``,
:meth:`CompiledPolicy.narrowed`); nothing it sends can widen it.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import functools
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bridge_rules import mcpnames
from bridge_rules.diagnostics import Diagnostic, did_you_mean, error
from bridge_rules.source import SourceMap, Span

if TYPE_CHECKING:
    from bridge_rules.model import Policy

MAX_MEMO = 4096
"""Names decided and remembered per policy: the tools a deployment sends are few, but a
model may call any name, so the memo stops growing here."""


class PolicyError(ValueError):
    """A request named a switch the rules do not define."""


@dataclass(frozen=True)
class PolicyRule:
    """One entry of ``policy:`` (or of the switch table), where it was written."""

    key: str
    """``deny``, ``allow``, ``trusted_servers`` or ``switches.<name>``."""
    pattern: str
    span: Span

    def __str__(self) -> str:
        return f"policy.{self.key} '{self.pattern}' ({self.span})"


@dataclass(frozen=True)
class Decision:
    allowed: bool
    rule: PolicyRule | None
    """The rule that decided; None when nothing in the policy speaks of the tool."""


ALLOWED = Decision(True, None)


def _glob(rules: tuple[PolicyRule, ...]) -> re.Pattern[str] | None:
    if not rules:
        return None
    return re.compile("|".join(f"(?:{fnmatch.translate(r.pattern)})" for r in rules))


def _first(rules: tuple[PolicyRule, ...], names: tuple[str, ...]) -> PolicyRule | None:
    for rule in rules:
        if any(fnmatch.fnmatchcase(n, rule.pattern) for n in names):
            return rule
    return None


def mcp_servers(name: str, prefixes: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The servers ``name`` may be a tool of, once the agent's own prefixes are off
    (:mod:`bridge_rules.mcpnames`); () for a name that is not an MCP tool's."""
    return mcpnames.servers(mcpnames.without_prefixes(name, prefixes) if prefixes else name)


def connector_name(server: str) -> str:
    """How a server of the MCP connector (``mcp_servers[]``, ``mcp_toolset``) is matched by
    ``deny`` and ``allow``: as all of its tools, ``mcp__<server>__*``."""
    return f"{mcpnames.PREFIX}{server}{mcpnames.SEP}*"


@dataclass(frozen=True, eq=False)
class CompiledPolicy:
    deny: tuple[PolicyRule, ...] = ()
    allow: tuple[PolicyRule, ...] | None = None
    trusted: tuple[PolicyRule, ...] | None = None
    """The trusted servers, one rule each (the pattern is the server's name)."""
    trusted_span: Span | None = None
    switch_table: dict[str, tuple[PolicyRule, ...]] = field(default_factory=dict)
    switches: tuple[str, ...] = ()
    """The switches on, the rules' own and a request's."""
    on_denied: str = "text"
    agent_prefixes: tuple[str, ...] = ()
    """What the rules' ``kind: prefix`` stages put in front of the agent's own tools
    (``mcp__pi__``): not an MCP server, so ``trusted_servers`` judges what follows it."""
    _deny_re: re.Pattern[str] | None = field(init=False, default=None)
    _allow_re: re.Pattern[str] | None = field(init=False, default=None)
    _memo: dict[tuple[str, str], Decision] = field(init=False, default_factory=dict)

    active: bool = field(init=False, default=False)
    """Whether anything is denied: read on every request, so computed once."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "_deny_re", _glob(self.deny))
        object.__setattr__(self, "_allow_re", _glob(self.allow or ()))
        active = bool(self.deny) or self.allow is not None or self.trusted is not None
        object.__setattr__(self, "active", active)

    def decide(self, local: str, wire: str) -> Decision:
        """Whether a tool with these names passes, and the rule that says so."""
        key = (local, wire)
        found = self._memo.get(key)
        if found is None:
            found = self._decide((local,) if local == wire else (local, wire))
            if len(self._memo) < MAX_MEMO:
                self._memo[key] = found
        return found

    def _decide(self, names: tuple[str, ...]) -> Decision:
        rule = self.deny_rule(names)
        if rule is not None:
            return Decision(False, rule)
        if self.trusted is not None:
            found = [s for n in names for s in mcp_servers(n, self.agent_prefixes)]
            if found:
                return self._trusted(tuple(dict.fromkeys(found)))
        if self.allow is None:
            return ALLOWED
        if self._allow_re is not None and any(self._allow_re.match(n) for n in names):
            return Decision(True, _first(self.allow, names))
        where = self.allow[0].span if self.allow else self.trusted_span or Span("policy")
        return Decision(False, PolicyRule("allow", "(not listed)", where))

    def deny_rule(self, names: tuple[str, ...]) -> PolicyRule | None:
        """The first ``deny`` (or switch) rule that matches one of ``names``, or None."""
        if self._deny_re is not None and any(self._deny_re.match(n) for n in names):
            return _first(self.deny, names)
        return None

    def _trusted(self, servers: tuple[str, ...]) -> Decision:
        """Every server the names may belong to must be trusted (:mod:`bridge_rules.mcpnames`)."""
        assert self.trusted is not None
        trusted = {rule.pattern: rule for rule in self.trusted}
        for server in servers:
            if server not in trusted:
                where = self.trusted_span or Span("policy")
                return Decision(False, PolicyRule("trusted_servers", server, where))
        return Decision(True, trusted[servers[0]])

    def server(self, server: str) -> Decision:
        """Whether a server of the MCP connector (``mcp_servers[]``, an ``mcp_toolset``) may
        be sent: ``deny`` and ``allow`` judge it as ``mcp__<server>__*``, and
        ``trusted_servers`` by its name."""
        name = connector_name(server)
        rule = self.deny_rule((name,))
        if rule is not None:
            return Decision(False, rule)
        if self.trusted is not None:
            return self._trusted((server,))
        if self.allow is None:
            return ALLOWED
        return self._decide((name,))

    def explain(self, local: str, wire: str) -> dict[str, object]:
        """The decision for ``explain``: passed or denied, and by which rule where."""
        decision = self.decide(local, wire)
        rule = decision.rule
        verdict = "allowed" if decision.allowed else "denied"
        by = f" by {rule}" if rule is not None else " (no policy rule names it)"
        switches = f"; switches on: {', '.join(self.switches)}" if self.switches else ""
        return {
            "allowed": decision.allowed,
            "rule": None
            if rule is None
            else {"key": rule.key, "pattern": rule.pattern, "at": rule.span.to_dict()},
            "on_denied": self.on_denied,
            "text": f"{verdict}{by}{switches}",
        }

    def narrowed(self, names: tuple[str, ...]) -> CompiledPolicy:
        """This policy with more switches on: only ever more denied. Raises
        :class:`PolicyError` for a name the switch table does not hold."""
        unknown = [n for n in names if n not in self.switch_table]
        if unknown:
            known = ", ".join(sorted(self.switch_table)) or "none"
            raise PolicyError(f"unknown policy switch {', '.join(unknown)} (known: {known})")
        added = [n for n in dict.fromkeys(names) if n not in self.switches]
        if not added:
            return self
        extra = tuple(rule for n in added for rule in self.switch_table[n])
        return dataclasses.replace(
            self, deny=self.deny + extra, switches=self.switches + tuple(added)
        )

    def with_prefixes(self, prefixes: tuple[str, ...]) -> CompiledPolicy:
        """This policy knowing the agent's own prefixes (the compiler sets them)."""
        if prefixes == self.agent_prefixes:
            return self
        return dataclasses.replace(self, agent_prefixes=prefixes)


NO_POLICY = CompiledPolicy()


def parse_switches(value: str) -> tuple[str, ...]:
    """``read_only, no_web`` (a header's value) -> the switch names."""
    return tuple(n for n in (p.strip() for p in value.split(",")) if n)


# ------------------------------------------------------------------ compiling
Layer = tuple["Policy", "SourceMap"]


def _rules(
    key: str, patterns: list[str], smap: SourceMap, path: tuple[str, ...]
) -> list[PolicyRule]:
    return [
        PolicyRule(key, p, smap.value_span(("policy", *path, i))) for i, p in enumerate(patterns)
    ]


def compile_policy(
    layers: list[Layer], base: list[Layer]
) -> tuple[CompiledPolicy, list[Diagnostic]]:
    """The rule files' ``policy:`` sections, later files overlaying earlier ones field by
    field; ``base``: the packaged switch table (the ``capabilities`` profile), which a rule
    file's ``switch_table`` extends or overrides entry by entry."""
    table: dict[str, tuple[PolicyRule, ...]] = {}
    for model, smap in [*base, *layers]:
        for name, patterns in model.switch_table.items():
            table[name] = tuple(_rules(f"switches.{name}", patterns, smap, ("switch_table", name)))
    deny: list[PolicyRule] = []
    allow: list[PolicyRule] | None = None
    trusted: list[PolicyRule] | None = None
    trusted_span: Span | None = None
    switches: list[tuple[str, Span]] = []
    on_denied = "text"
    for model, smap in layers:
        given = model.model_fields_set
        if "deny" in given:
            deny = _rules("deny", model.deny, smap, ("deny",))
        if "allow" in given:
            allow = None if model.allow is None else _rules("allow", model.allow, smap, ("allow",))
        if "trusted_servers" in given:
            servers = model.trusted_servers
            trusted = None
            if servers is not None:
                trusted = _rules("trusted_servers", servers, smap, ("trusted_servers",))
            trusted_span = smap.key_span(("policy", "trusted_servers"))
        if "switches" in given:
            switches = [
                (n, smap.value_span(("policy", "switches", i)))
                for i, n in enumerate(model.switches)
            ]
        if "on_denied" in given:
            on_denied = model.on_denied
    diags: list[Diagnostic] = []
    on: list[str] = []
    for name, span in switches:
        if name not in table:
            known = ", ".join(sorted(table)) or "none"
            diags.append(
                error(
                    "BR108",
                    f"unknown policy switch '{name}'",
                    span,
                    hint=did_you_mean(name, list(table)) or f"known switches: {known}",
                )
            )
            continue
        on.append(name)
    policy = CompiledPolicy(
        deny=tuple(deny),
        allow=None if allow is None else tuple(allow),
        trusted=None if trusted is None else tuple(trusted),
        trusted_span=trusted_span,
        switch_table=table,
        on_denied=on_denied,
    )
    return policy.narrowed(tuple(on)), diags


@functools.cache
def packaged_switches() -> list[Layer]:
    """The ``capabilities`` profile's ``policy:``, read once (empty if it is missing)."""
    from bridge_rules.loader import read_file
    from bridge_rules.model import RuleFile
    from bridge_rules.resources import display_root, profile_path

    path = profile_path("capabilities")
    if path is None:
        return []
    root = display_root()
    shown = str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
    doc, _ = read_file(path, shown)
    if doc is None:
        return []
    rules = RuleFile.model_validate(doc.data)
    return [] if rules.policy is None else [(rules.policy, doc.source_map)]
