"""Whether the rules apply to a request: api, model id and environment overrides."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bridge_rules.model import Gate
from bridge_rules.patterns import Pattern
from bridge_rules.source import Span

_SEEN_LIMIT = 1024


@dataclass(frozen=True, kw_only=True)
class CompiledGate:
    """The layered ``gate`` section with its model pattern compiled (RE2) at load."""

    gate: Gate | None = None
    span: Span | None = None
    model_re: Pattern | None = None
    apis: frozenset[str] | None = None
    _seen: dict[str, bool] = field(default_factory=dict, repr=False, compare=False)

    def model_matches(self, model_id: str) -> bool:
        """Whether the model pattern is found in ``model_id``, memoised per id.

        Clients send the same few model ids on every request, and one RE2 search
        through its Python wrapper costs several microseconds; a dict lookup does
        not. The memo is bounded, and only gains whole entries, so it is safe to share.
        """
        assert self.model_re is not None
        found = self._seen.get(model_id)
        if found is None:
            found = self.model_re.search(model_id) is not None
            if len(self._seen) >= _SEEN_LIMIT:
                self._seen.clear()
            self._seen[model_id] = found
        return found

    def describe(self) -> str:
        """One line for ``explain``: what the gate checks, in evaluation order."""
        spec = self.gate
        if spec is None:
            return "always open (no gate)"
        parts = []
        if self.apis is not None:
            parts.append("api in {" + ", ".join(sorted(self.apis)) + "}")
        if self.model_re is not None:
            parts.append(f"model id matches /{self.model_re.pattern}/")
        if spec.env is not None:
            if spec.env.disable:
                parts.append(f"{spec.env.disable}={spec.env.value} closes")
            if spec.env.force:
                parts.append(
                    f"{spec.env.force}={spec.env.value} forces open (skips {spec.env.force_skips})"
                )
        return "; ".join(parts) or "always open"


@dataclass(frozen=True)
class GateDecision:
    open: bool
    reason: str

    def __bool__(self) -> bool:
        return self.open


# The decisions every request of a running proxy gets, made once (frozen: safe to share).
_MATCHED = GateDecision(True, "api and model id match")
_NO_GATE = GateDecision(True, "no gate: the rules always apply")


def decide(
    gate: CompiledGate, model: Mapping[str, Any] | None, env: Mapping[str, str]
) -> GateDecision:
    """Evaluate the gate in the documented order: disable, force, api, model."""
    spec = gate.gate
    if spec is None:
        return _NO_GATE
    info = model or {}
    forced = False
    if spec.env is not None:
        if spec.env.disable and env.get(spec.env.disable) == spec.env.value:
            return GateDecision(False, f"closed by {spec.env.disable}={spec.env.value}")
        if spec.env.force and env.get(spec.env.force) == spec.env.value:
            if spec.env.force_skips == "all":
                return GateDecision(True, f"forced open by {spec.env.force}={spec.env.value}")
            forced = True
    api = info.get("api")
    if gate.apis is not None and api not in gate.apis:
        wanted = " or ".join(sorted(gate.apis))
        return GateDecision(False, f"api {api!r} is not {wanted}")
    if gate.model_re is not None and not forced:
        model_id = info.get("id") or ""
        if not isinstance(model_id, str) or not gate.model_matches(model_id):
            shown = (
                model_id
                if not isinstance(model_id, str) or len(model_id) <= 200
                else (model_id[:200] + "...")
            )
            return GateDecision(
                False, f"model id {shown!r} does not match /{gate.model_re.pattern}/"
            )
    if forced:
        return GateDecision(True, f"forced open by {spec.env.force}={spec.env.value}")  # type: ignore[union-attr]
    return _MATCHED
