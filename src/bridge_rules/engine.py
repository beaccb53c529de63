"""The public engine: load rules once, then resolve names (and later payloads) fast."""

from __future__ import annotations

import os
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from bridge_rules import calls
from bridge_rules.bindings.explain import binding_section
from bridge_rules.calls import ToolCall
from bridge_rules.compiler import CompiledRules, compile_rules
from bridge_rules.compose import load_sources
from bridge_rules.diagnostics import Diagnostic, RulesError, has_errors, sort_diagnostics, warning
from bridge_rules.explain import Explanation, InboundCheck
from bridge_rules.gate import GateDecision, decide
from bridge_rules.names import Collision, InboundStep, Resolver, StageStep
from bridge_rules.transform import (
    OutboundResult,
    rewrite_message,
    rewrite_outbound,
    rewrite_stream,
    rewrite_stream_async,
)

_NO_ARGS: Any = object()

RuleRef = str | os.PathLike[str] | Iterable[str | os.PathLike[str]] | None


def _normalise_refs(ref: RuleRef) -> str | Path | list[str | Path] | None:
    if ref is None:
        return None
    if isinstance(ref, str):
        return ref
    if isinstance(ref, os.PathLike):
        return Path(ref)
    return [r if isinstance(r, str) else Path(r) for r in ref]


class Engine:
    """Compiled rules plus the resolver that applies them.

    Build one with :func:`bridge_rules.load`; it is safe to share between
    threads for reading (caches only grow by whole entries).
    """

    def __init__(self, rules: CompiledRules) -> None:
        self.rules = rules
        # Per local name: (wire name, history argument converter); see calls.history_plan.
        self.history_plans: dict[str, tuple[str, Any]] = {}
        self.resolver = Resolver(rules)
        self.diagnostics: list[Diagnostic] = sort_diagnostics(
            [*rules.diagnostics, *self._collision_diagnostics()]
        )

    # ------------------------------------------------------------ gate
    def gate(
        self, model: Mapping[str, Any] | None = None, env: Mapping[str, str] | None = None
    ) -> bool:
        """Whether the rules apply for this model (``{"api": ..., "id": ...}``)."""
        return self.gate_decision(model, env).open

    def gate_decision(
        self, model: Mapping[str, Any] | None = None, env: Mapping[str, str] | None = None
    ) -> GateDecision:
        return decide(self.rules.gate, model, os.environ if env is None else env)

    # ----------------------------------------------------------- names
    def outbound_name(self, name: str) -> str:
        """The wire name a local tool goes out under."""
        return self.resolver.outbound(name).wire

    def inbound_name(self, name: str, registered: Iterable[str] | None = None) -> str | None:
        """The local tool a wire name maps back to, or None when no rule maps it.

        ``registered`` is the set of local tool names that exist (the request's
        own tools in the proxy); None means every local name the rules know.
        """
        return self.resolver.inbound(name, registered)

    def known_locals(self) -> list[str]:
        return self.resolver.known_locals()

    def collisions(self, registered: Iterable[str] | None = None) -> list[Collision]:
        return list(self.resolver.reverse_map(registered).collisions)

    # ----------------------------------------------------------- calls
    def outbound_call(self, name: str, arguments: Any) -> ToolCall:
        """A local call in wire shape (name and arguments), as history replay sends it."""
        return calls.outbound_call(self, name, arguments)

    def inbound_call(
        self, name: str, arguments: Any, registered: Iterable[str] | None = None
    ) -> ToolCall:
        """A model's call in local shape: name mapped back, arguments adapted and repaired."""
        return calls.inbound_call(self, name, arguments, registered)

    def wire_schema(self, local_name: str, local_schema: Any) -> Any:
        return calls.wire_schema(self, local_name, local_schema)

    def adapts_arguments(self, wire_name: str, registered: Iterable[str] | None = None) -> bool:
        return calls.adapts_arguments(self, wire_name, registered)

    # -------------------------------------------------------- payloads
    def outbound(
        self,
        payload: Any,
        model: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> OutboundResult:
        """A request body rewritten for the wire (see docs/transform.md).

        Gate first (api ``anthropic-messages``, model id from ``model`` or the
        payload's ``model``; ``env=None`` reads ``os.environ``): a closed gate
        returns the payload unchanged. ``.payload`` is a new dict sharing
        unchanged sub-objects with the input, which is never mutated;
        ``.renames`` maps local -> wire names; ``.registered`` are the local
        names of the tools sent, to pass back to :meth:`inbound`. Malformed
        shapes pass through; this never raises on the payload.
        """
        return rewrite_outbound(self, payload, model, env)

    def inbound(self, message: Any, registered: Iterable[str] | None = None) -> Any:
        """A non-streaming response message with tool calls in local shape (a new dict).

        ``registered``: the request's local tool names (``OutboundResult.registered``);
        None means every local name the rules know.
        """
        return rewrite_message(self, message, registered)

    def inbound_stream(
        self, chunks: Iterable[bytes], registered: Iterable[str] | None = None
    ) -> Iterator[bytes]:
        """An SSE response stream rewritten chunk by chunk; any chunking works.

        Events no rule changes come out byte for byte; only the argument deltas
        of a call whose binding adapts arguments are held, until the block stops.
        """
        return rewrite_stream(self, chunks, registered)

    def inbound_stream_async(
        self, chunks: AsyncIterable[bytes], registered: Iterable[str] | None = None
    ) -> AsyncIterator[bytes]:
        """:meth:`inbound_stream` over an async iterable (an ASGI/httpx body)."""
        return rewrite_stream_async(self, chunks, registered)

    # --------------------------------------------------------- explain
    def explain(
        self,
        name: str,
        registered: Iterable[str] | None = None,
        env: Mapping[str, str] | None = None,
        args: Any = _NO_ARGS,
    ) -> Explanation:
        """The full trace for one tool: every stage, the wire name, the way back; with
        ``args`` (wire-shaped), the arguments after each binding and repair operation."""
        steps: list[StageStep] = []
        out = self.resolver.outbound(name, trace=steps)
        names = self.known_locals() if registered is None else list(registered)
        if registered is None and name not in names:
            names.append(name)
        checks = []
        for wire in [out.wire, *(out.wire + s.suffix for s in self.rules.strips)]:
            trace: list[InboundStep] = []
            local = self.resolver.inbound(wire, names, trace)
            checks.append(InboundCheck(wire, local, trace))
        collisions = [
            c
            for c in self.resolver.reverse_map(names).collisions
            if name in c.locals or c.wire == out.wire
        ]
        gate = self.rules.gate.gate
        gate_text = "always open (no gate)" if gate is None else _describe_gate(self)
        traced = args is not _NO_ARGS
        section = binding_section(
            calls.adapter_for(self, name),
            self.rules.repairs.steps.get(name, ()),
            args if traced else None,
            traced,
        )
        return Explanation(
            sections={"arguments": section},
            tool=name,
            rules=self.rules.name,
            files=[f.doc.path for f in self.rules.files],
            gate=gate_text,
            steps=steps,
            wire=out.wire,
            registered=names,
            inbound=checks,
            collisions=collisions,
        )

    # ---------------------------------------------------------- checks
    def _collision_diagnostics(self) -> list[Diagnostic]:
        suppressed = {s.code for s, _span in self.rules.suppressions}
        if "BR203" in suppressed:
            return []
        out = []
        anchor = self.rules.files[-1].doc.source_map.key_span(()) if self.rules.files else None
        for c in self.resolver.reverse_map(None).collisions:
            span = next((s for s in c.spans if s is not None), anchor)
            if span is not None:
                out.append(warning("BR203", c.describe(), span))
        return out


def _describe_gate(engine: Engine) -> str:
    gate = engine.rules.gate
    spec = gate.gate
    assert spec is not None
    parts = []
    if gate.apis is not None:
        parts.append("api in {" + ", ".join(sorted(gate.apis)) + "}")
    if gate.model_re is not None:
        parts.append(f"model id matches /{gate.model_re.pattern}/")
    if spec.env is not None:
        if spec.env.disable:
            parts.append(f"{spec.env.disable}={spec.env.value} closes")
        if spec.env.force:
            parts.append(
                f"{spec.env.force}={spec.env.value} forces open (skips {spec.env.force_skips})"
            )
    return "; ".join(parts) or "always open"


def load(rules: RuleRef = None) -> Engine:
    """Load and compile rules: the packaged default, a profile name, a file, a directory, or a list.

    Raises :class:`~bridge_rules.diagnostics.RulesError` carrying every
    diagnostic when any of them is an error.
    """
    source = load_sources(_normalise_refs(rules))
    compiled = compile_rules(source)
    if has_errors(compiled.diagnostics) or not compiled.files:
        raise RulesError(compiled.diagnostics)
    return Engine(compiled)
