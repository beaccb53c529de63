"""What a rule set says once layered and compiled, with the provenance of every part.

This is the rule author's view (files, stages, bindings, pins, suppressions, each
with where it was written) that lint, explain and drift read. The request path
reads the :class:`~bridge_rules.runtime.Runtime` built from it instead.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field

from bridge_rules import jsonio
from bridge_rules.bindings.adapter import Adapter
from bridge_rules.compose import SourcedFile
from bridge_rules.diagnostics import Diagnostic
from bridge_rules.gate import CompiledGate
from bridge_rules.model import DebugLogSetting, Filters, Suppression, TextRules
from bridge_rules.model_bindings import Binding
from bridge_rules.modelrules import NO_MODELS, ModelTable
from bridge_rules.pins import Pin
from bridge_rules.repair.rules import RepairSet
from bridge_rules.schemas import DEFAULT_TARGET, Profile, profile
from bridge_rules.source import Span
from bridge_rules.stages import CompiledStage, Gateway, NameGuard, Strip


@dataclass(frozen=True)
class CompiledBinding:
    binding: Binding
    span: Span
    file: SourcedFile
    index: int = 0


@dataclass(frozen=True, kw_only=True)
class CompiledRules:
    files: tuple[SourcedFile, ...]
    stages: tuple[CompiledStage, ...]
    gate: CompiledGate
    inbound_case: str
    strips: tuple[Strip, ...]
    bindings: Mapping[str, CompiledBinding]
    pin: Pin | None
    pin_span: Span | None
    local_pin: Pin | None
    local_tools: tuple[tuple[str, Span], ...]
    text: TextRules | None
    filters: Filters | None
    suppressions: tuple[tuple[Suppression, Span], ...]
    diagnostics: tuple[Diagnostic, ...] = ()
    adapters: Mapping[str, Adapter] = field(default_factory=dict)
    repairs: RepairSet = field(default_factory=RepairSet)
    gateway: Gateway = field(default_factory=Gateway)
    unmapped: str = "pass"
    agent_dispatch: str = "exact"
    """``inbound.agent_dispatch``: whether the agent lower-cases a name it has no tool for."""
    wire_names: NameGuard = field(default_factory=NameGuard)
    schemas: Profile = field(default_factory=lambda: profile(DEFAULT_TARGET))
    """``schemas:``: the target and operations tool schemas are converted with."""
    schemas_span: Span | None = None
    """``inbound.unmapped``: what happens to a call that maps to no registered tool."""
    debug_log: DebugLogSetting | None = None
    """``debug_log.env``: the variable that may name a debug log file."""
    models: ModelTable = NO_MODELS
    """``models:``: what each upstream model accepts, every setting located."""

    @functools.cached_property
    def digest(self) -> str:
        """The rules hash: SHA-256 over each file's bytes in load order and the pins they
        use, so an operator can tell which rules a process runs (``serve``'s start line,
        ``/readyz``) and whether a reload changed them. Computed once, on first use."""
        h = hashlib.sha256()
        for sourced in self.files:
            h.update(sourced.doc.digest.encode() + b"\0")
        for pin in (self.pin, self.local_pin):
            if pin is not None:
                h.update(pin.spec.encode() + b"\0" + jsonio.dumps(pin.tools) + b"\0")
        return h.hexdigest()

    @property
    def name(self) -> str:
        for sourced in reversed(self.files):
            if sourced.rules.name:
                return sourced.rules.name
        return self.files[-1].doc.path if self.files else "(empty)"
