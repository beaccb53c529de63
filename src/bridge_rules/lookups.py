"""The one-at-a-time questions :class:`~bridge_rules.engine.Engine` answers: the gate for a
model, a name either way, one call's shape, one tool's trace, the rules' own tables. A
base class of ``Engine``, kept apart so the facade module holds what builds engines and
what works on whole payloads."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from bridge_rules import calls
from bridge_rules.calls import ToolCall
from bridge_rules.calls import checked_name as _name
from bridge_rules.calls import checked_names as _names
from bridge_rules.compiled import CompiledRules
from bridge_rules.debuglog import DebugLog, open_declared
from bridge_rules.explain import NO_ARGS, Explanation, explain_tool
from bridge_rules.gate import GateDecision
from bridge_rules.names import Collision, Resolver
from bridge_rules.runtime import Runtime
from bridge_rules.schemas.book import Shapes
from bridge_rules.stagetables import StageTable, describe


class Lookups:
    """Questions about single names and calls, over :attr:`runtime`."""

    runtime: Runtime
    env: Mapping[str, str] | None

    def _env(self, env: Mapping[str, str] | None) -> Mapping[str, str] | None:
        return self.env if env is None else env

    # ------------------------------------------------------------ gate
    def gate(
        self, model: Mapping[str, Any] | None = None, env: Mapping[str, str] | None = None
    ) -> bool:
        """Whether the rules apply for this model (``{"api": ..., "id": ...}``)."""
        return self.gate_decision(model, env).open

    def gate_decision(
        self, model: Mapping[str, Any] | None = None, env: Mapping[str, str] | None = None
    ) -> GateDecision:
        return self.runtime.gate_decision(model, self._env(env))

    # ----------------------------------------------------------- names
    def outbound_name(self, name: str) -> str:
        """The wire name a local tool goes out under."""
        return self.runtime.outbound_name(_name(name))

    def inbound_name(self, name: str, registered: Iterable[str] | None = None) -> str | None:
        """The local tool a wire name maps back to, or None when no rule maps it.

        ``registered`` is the set of local tool names that exist (the request's
        own tools in the proxy); None means every local name the rules know.
        """
        return self.runtime.inbound_name(_name(name), _names(registered))

    def known_locals(self) -> list[str]:
        return list(self.runtime.known_locals)

    def collisions(self, registered: Iterable[str] | None = None) -> list[Collision]:
        return list(self.runtime.resolver.reverse_map(_names(registered)).collisions)

    # ----------------------------------------------------------- calls
    def outbound_call(self, name: str, arguments: Any, shapes: Shapes | None = None) -> ToolCall:
        """A local call in wire shape (name and arguments), as history replay sends it;
        ``shapes``: the request's schema conversions (``OutboundResult.shapes``). Where
        replay changes nothing the arguments are the caller's own object, as parts of the
        payload ``outbound`` returns are: read them, copy before changing them."""
        return calls.outbound_call(self.runtime, _name(name), arguments, shapes)

    def inbound_call(
        self,
        name: str,
        arguments: Any,
        registered: Iterable[str] | None = None,
        shapes: Shapes | None = None,
    ) -> ToolCall:
        """A model's call in local shape: name mapped back, arguments restored through the
        request's schema conversions (``shapes``), adapted and repaired."""
        return calls.inbound_call(self.runtime, _name(name), arguments, _names(registered), shapes)

    def wire_schema(self, local_name: str, local_schema: Any) -> Any:
        return calls.wire_schema(self.runtime, _name(local_name), local_schema)

    def adapts_arguments(
        self,
        wire_name: str,
        registered: Iterable[str] | None = None,
        shapes: Shapes | None = None,
    ) -> bool:
        return calls.adapts_arguments(self.runtime, _name(wire_name), _names(registered), shapes)

    # ------------------------------------------------------ the rules
    def debug_log(self, env: Mapping[str, str] | None = None) -> DebugLog | None:
        """The log the rules' ``debug_log: {env: VAR}`` names, or None: :meth:`outbound`,
        :meth:`inbound`, :meth:`inbound_stream` append to it (``serve`` logs :meth:`turn`)."""
        return open_declared(self.runtime.rules.debug_log, self._env(env))

    def stage_tables(self) -> list[StageTable]:
        """Every name stage as plain data, in the order the way out tries them."""
        return [describe(stage) for stage in self.runtime.rules.stages]

    @property
    def rules(self) -> CompiledRules:
        return self.runtime.rules

    @property
    def resolver(self) -> Resolver:
        return self.runtime.resolver

    # --------------------------------------------------------- explain
    def explain(
        self,
        name: str,
        registered: Iterable[str] | None = None,
        env: Mapping[str, str] | None = None,
        args: Any = NO_ARGS,
    ) -> Explanation:
        """The full trace for one tool: every stage, the wire name, the way back; with
        ``args`` (wire-shaped), the arguments after each binding and repair operation.

        ``env`` is accepted for symmetry with :meth:`gate`; the trace does not depend on it.
        """
        return explain_tool(self.runtime, _name(name), _names(registered), args)
