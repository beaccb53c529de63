"""Whether the rules apply to a request: api, model id and environment overrides."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bridge_rules.compiler import CompiledGate


@dataclass(frozen=True)
class GateDecision:
    open: bool
    reason: str

    def __bool__(self) -> bool:
        return self.open


def decide(
    gate: CompiledGate, model: Mapping[str, Any] | None, env: Mapping[str, str]
) -> GateDecision:
    """Evaluate the gate in the documented order: disable, force, api, model."""
    spec = gate.gate
    if spec is None:
        return GateDecision(True, "no gate: the rules always apply")
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
        if not isinstance(model_id, str) or not gate.model_re.search(model_id):
            return GateDecision(
                False, f"model id {model_id!r} does not match /{gate.model_re.pattern}/"
            )
    if forced:
        return GateDecision(True, f"forced open by {spec.env.force}={spec.env.value}")  # type: ignore[union-attr]
    return GateDecision(True, "api and model id match")
