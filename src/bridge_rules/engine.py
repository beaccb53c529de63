"""The public facade: ``bridge_rules.load()`` and :class:`Engine`.

An ``Engine`` holds one compiled :class:`~bridge_rules.runtime.Runtime` and
forwards to the modules that work on it; it adds argument checks at the API
boundary and nothing else. No module below this one imports it.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bridge_rules.calls import checked_name as _name
from bridge_rules.calls import checked_names as _names
from bridge_rules.compiler import retargeted
from bridge_rules.diagnostics import Diagnostic
from bridge_rules.lookups import Lookups
from bridge_rules.modelrules import ModelTable
from bridge_rules.policy import PolicyError, parse_switches
from bridge_rules.ruleset import (
    BindingSource,
    RuleRef,
    binding_file,
    binding_files_in,
    binding_source,
    load_analysis,
    with_bindings,
)
from bridge_rules.runtime import Runtime
from bridge_rules.schemas.book import Shapes
from bridge_rules.schemas.targets import TARGETS as SCHEMA_TARGETS
from bridge_rules.sealing import Sealer, sealer_for
from bridge_rules.stagetables import StageTable, canonical_names

if TYPE_CHECKING:
    from bridge_rules.transform import OutboundBytes, OutboundResult
    from bridge_rules.transform.report import InboundReport
    from bridge_rules.transform.results import CallSeals
    from bridge_rules.transform.scope import CallScope
    from bridge_rules.transform.turn import Turn

# Besides Engine: the types its methods take, return and raise (docs/architecture.md).
__all__ = ["SCHEMA_TARGETS", "Engine", "InboundReport", "ModelTable", "PolicyError", "RuleRef",
           "Runtime", "Sealer", "StageTable", "Turn", "canonical_names", "load",
           "parse_switches"]  # fmt: skip


class Engine(Lookups):
    """Compiled rules, ready to apply. Build one with :func:`bridge_rules.load`.

    Immutable once built and safe to share between threads and tasks: nothing that can
    change an answer is kept between calls. What one request needs for its answer lives
    in the :class:`~bridge_rules.transform.turn.Turn` that :meth:`turn` returns.

    ``env``: where the gate's environment overrides are read; None reads ``os.environ``
    at each call (a server passes a snapshot taken at start-up).
    """

    def __init__(
        self,
        runtime: Runtime,
        diagnostics: Iterable[Diagnostic] = (),
        *,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.runtime = runtime
        self.env = env
        self.diagnostics: list[Diagnostic] = list(diagnostics)
        """Warnings found while loading (errors raise :class:`~bridge_rules.RulesError`)."""
        from bridge_rules.transform.results import seals

        self._seals: CallSeals | None = seals(runtime)
        self._files = runtime.rules.files
        self._added: Mapping[str, BindingSource] = {}

    def with_seal_key(self, key: bytes | str | Sealer | None) -> Engine:
        """These rules with the deployment's key for sealed ``tool_use`` ids
        (docs/transform.md): what a repair changed in a call travels in the call's id, so
        any process with the same rules and key answers the next request the same way.
        Without a key, repairs that would need one (a stripped bash pipeline) are not made."""
        runtime = self.runtime.with_sealer(sealer_for(key))
        return self if runtime is self.runtime else Engine(runtime, self.diagnostics, env=self.env)

    def with_bindings(
        self,
        bindings: Sequence[Mapping[str, Any]] | os.PathLike[str],
        *,
        origin: str = "runtime",
    ) -> Engine:
        """These rules with bindings added while the program runs (docs/bindings.md,
        "Bindings at run time"); this engine is unchanged, the new one serves the next request.

        ``bindings``: a list of bindings as a rule file's ``bindings:`` holds them, added under
        ``origin`` (adding under an origin again replaces what it added before; an empty list
        removes it); or the path of a YAML file of bindings (its origin is the path), or of a
        directory of them (one origin per file; reading a directory again replaces every
        file it gave). They are checked as a rule file is, with the same diagnostics (a
        :class:`~bridge_rules.RulesError` on an error), come after every rule file, replacing a
        file's binding of the same local tool, and ``explain`` shows where each came from.
        Which order bindings arrive in never changes the result.
        """
        added = dict(self._added)
        if isinstance(bindings, os.PathLike):
            path = Path(bindings)
            if path.is_dir():
                where = str(path)
                added = {k: v for k, v in added.items() if v.directory != where}
                added.update((s.origin, s) for s in binding_files_in(path))
            else:
                source = binding_file(path)
                added[source.origin] = source
        elif bindings:
            added[origin] = binding_source(origin, bindings)
        else:
            added.pop(origin, None)
        analysis = with_bindings(self._files, added, self.rules.name)
        assert analysis.runtime is not None
        engine = Engine(
            analysis.runtime.with_sealer(self.runtime.sealer), analysis.diagnostics, env=self.env
        )
        engine._files, engine._added = self._files, added
        return engine

    def retargeted(self, target: str) -> Engine:
        """These rules converting tool schemas for a :data:`SCHEMA_TARGETS` entry or ``none``."""
        return self._over(retargeted(self.runtime, target))

    def narrowed(self, switches: Sequence[str]) -> Engine:
        """These rules with policy switches always on (:class:`PolicyError`: not defined)."""
        return self._over(self.runtime.narrowed(tuple(switches)))

    def _over(self, runtime: Runtime) -> Engine:
        engine = Engine(runtime, self.diagnostics, env=self.env)
        engine._files, engine._added = self._files, self._added
        return engine

    @property
    def model_table(self) -> ModelTable:
        """``models:``: what each model accepts and which models are listed, located."""
        return self.runtime.rules.models

    @property
    def binding_origins(self) -> list[str]:
        """The origins of the bindings added at run time, in the order they are applied."""
        return sorted(self._added)

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
        from bridge_rules.transform.turn import outbound_fitted  # not needed by explain/lint

        if model is not None:
            _name(model, "model")
        result = outbound_fitted(self.runtime, payload, model, self._env(env))
        log = self.debug_log(env)
        if log is not None:
            log.outbound(payload, result.payload, result.renames)
        return result

    def outbound_bytes(
        self,
        body: bytes,
        model: str | None = None,
        env: Mapping[str, str] | None = None,
        *,
        cache: bool = True,
    ) -> OutboundBytes:
        """A serialised request body rewritten for the wire, reusing earlier requests' messages.

        The same bytes as ``jsonio.dumps(self.outbound(jsonio.loads(body)).payload)``
        (:mod:`bridge_rules.jsonio`: exact for integers of any size); messages an earlier
        request already sent come from the runtime's message cache (``cache=False`` skips
        it; ``BRIDGE_RULES_OUTBOUND_CACHE=0`` turns it off). Raises ``ValueError`` exactly
        when ``jsonio.loads(body)`` would. :meth:`turn` also rewrites the answer.
        See docs/transform.md.
        """
        from bridge_rules.transform.turn import rewrite_turn

        runtime = self._turn_runtime(body, model, ())
        return rewrite_turn(runtime, body, model, self._env(env), cache)[0]

    def turn(
        self,
        body: bytes,
        model: str | None = None,
        env: Mapping[str, str] | None = None,
        *,
        cache: bool = True,
        policy: Iterable[str] = (),
    ) -> Turn:
        """One request: ``body`` rewritten for the wire (``.body``, ``.outcome``), and the
        methods that rewrite its answer with what the request decided (``.message``,
        ``.stream``, ``.stream_async``; ``.report`` collects the names mapped back).

        ``policy``: capability switches this request turns on besides the rules' own (the
        proxy's ``x-bridge-rules-policy`` header). They only narrow what passes; an unknown
        one raises :class:`~bridge_rules.policy.PolicyError` (a ``ValueError``).

        This is what the proxy runs per request. Raises ``ValueError`` (a
        ``json.JSONDecodeError``) when ``body`` is not JSON; integers of any size are kept.
        """
        from bridge_rules.transform.turn import rewrite_turn, start_turn

        runtime = self._turn_runtime(body, model, policy)
        return start_turn(runtime, rewrite_turn(runtime, body, model, self._env(env), cache))

    def _turn_runtime(self, body: bytes, model: str | None, policy: Iterable[str]) -> Runtime:
        """The runtime a turn runs under, once its arguments are checked."""
        if not isinstance(body, bytes):
            raise TypeError(f"body must be bytes, not {type(body).__name__}")
        if model is not None:
            _name(model, "model")
        runtime = self.runtime
        switches = (policy,) if isinstance(policy, str) else tuple(policy)
        for switch in switches:
            _name(switch, "policy switch")
        if switches:
            runtime = runtime.narrowed(switches)
        return runtime

    def _scope(
        self,
        registered: Iterable[str] | None,
        report: InboundReport | None,
        shapes: Shapes | None,
    ) -> CallScope:
        from bridge_rules.transform.scope import CallScope

        return CallScope(self.runtime, _names(registered), self._seals, report, shapes)

    def inbound(
        self,
        message: Any,
        registered: Iterable[str] | None = None,
        report: InboundReport | None = None,
        shapes: Shapes | None = None,
    ) -> Any:
        """A non-streaming response message with tool calls in local shape (a new dict).

        ``registered`` and ``shapes``: the request's local tool names and schema
        conversions (``OutboundResult.registered``, ``.shapes``; :meth:`turn` passes both);
        None means every local name the rules know. ``report`` (an
        :class:`~bridge_rules.transform.report.InboundReport`) receives the names mapped
        back (``renamed``, wire -> local; ``renamed_calls``) and the calls that map to no
        registered tool when ``inbound.unmapped`` is ``warn`` or ``error``; the stream
        methods fill it the same way.
        """
        from bridge_rules.transform import InboundReport, rewrite_message

        log = self.debug_log()
        report = InboundReport() if log is not None and report is None else report
        known = 0 if report is None else len(report.renamed)
        out = rewrite_message(self._scope(registered, report, shapes), message)
        if log is not None and report is not None:
            log.inbound(report.renamed, known)
        return out

    def inbound_stream(
        self,
        chunks: Iterable[bytes],
        registered: Iterable[str] | None = None,
        report: InboundReport | None = None,
        shapes: Shapes | None = None,
    ) -> Iterator[bytes]:
        """An SSE response stream rewritten chunk by chunk; any chunking works.

        Events no rule changes come out byte for byte; only the argument deltas
        of a call whose binding adapts arguments are held, until the block stops.
        """
        from bridge_rules.transform import InboundReport, rewrite_stream

        log = self.debug_log()
        report = InboundReport() if log is not None and report is None else report
        out = rewrite_stream(self._scope(registered, report, shapes), chunks)
        return out if log is None or report is None else log.stream(out, report.renamed)

    def inbound_stream_async(
        self,
        chunks: AsyncIterable[bytes],
        registered: Iterable[str] | None = None,
        report: InboundReport | None = None,
        shapes: Shapes | None = None,
    ) -> AsyncIterator[bytes]:
        """:meth:`inbound_stream` over an async iterable (an ASGI/httpx body)."""
        from bridge_rules.transform import rewrite_stream_async

        return rewrite_stream_async(self._scope(registered, report, shapes), chunks)


def load(rules: RuleRef = None, *, seal_key: bytes | str | Sealer | None = None) -> Engine:
    """Load and compile rules: the packaged default, a profile name, a file, a directory, or a list.

    Runs the same checks as ``bridge-rules lint`` and raises
    :class:`~bridge_rules.diagnostics.RulesError` carrying every diagnostic when
    any of them is an error; warnings are on ``Engine.diagnostics``.
    """
    analysis = load_analysis(rules)
    assert analysis.runtime is not None
    return Engine(analysis.runtime.with_sealer(sealer_for(seal_key)), analysis.diagnostics)
