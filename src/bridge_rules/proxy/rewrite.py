"""The rules as the proxy applies them: a compiled Runtime and the transform functions.

The proxy calls the transform layer directly with the Runtime it was given (no
facade in between). :class:`Rewriter` is the seam its mechanics tests replace
with a double that rewrites visibly.

Request bodies go through :meth:`BodyRewriter.outbound_body`: bytes in, bytes out.
Over a Runtime that is the conversation-aware path
(:func:`~bridge_rules.transform.rewrite_outbound_bytes`), which reuses the
messages earlier requests already sent and only parses what is new; a double
that only rewrites parsed payloads is adapted by :func:`body_rewriter`.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from bridge_rules import jsonio
from bridge_rules.runtime import Runtime
from bridge_rules.transform import (
    InboundReport,
    rewrite_message,
    rewrite_outbound,
    rewrite_outbound_bytes,
    rewrite_stream_async,
)
from bridge_rules.transform.results import CallMemory, MemorySealer, apply_results


class Outcome(Protocol):
    """What the proxy records of an outbound rewrite."""

    @property
    def rejected(self) -> str | None: ...  # why the request must not be sent (a 400)

    @property
    def renames(self) -> Mapping[str, str]: ...
    @property
    def gate_open(self) -> bool: ...
    @property
    def registered(self) -> list[str]: ...


class OutboundLike(Outcome, Protocol):
    @property
    def payload(self) -> Any: ...


class BodyOutcome(Outcome, Protocol):
    """A rewritten request body, serialised."""

    @property
    def body(self) -> bytes: ...
    @property
    def fields(self) -> Mapping[str, Any]: ...  # top-level fields other than messages


class Rewriter(Protocol):
    def outbound(self, payload: dict[str, Any], model: str | None) -> OutboundLike: ...
    def inbound(self, message: dict[str, Any], registered: list[str]) -> Any: ...
    def stream(
        self, chunks: AsyncIterator[bytes], registered: list[str]
    ) -> AsyncIterator[bytes]: ...


class BodyRewriter(Rewriter, Protocol):
    def outbound_body(self, body: bytes) -> BodyOutcome:
        """Rewrite a request body that starts with ``{``; raises ``jsonio.JSONDecodeError``
        when it is not valid JSON."""
        ...

    def inbound_report(
        self, message: dict[str, Any], registered: list[str]
    ) -> tuple[Any, InboundReport]:
        """The rewritten message, and what the rewrite found (names mapped back, unmapped
        calls for the ``x-bridge-rules-unmapped`` header)."""
        ...

    def stream_report(
        self, chunks: AsyncIterator[bytes], registered: list[str], report: InboundReport
    ) -> AsyncIterator[bytes]:
        """:meth:`stream`, filling ``report`` as it goes."""
        ...


@dataclass(frozen=True)
class _Parsed:
    body: bytes
    fields: Mapping[str, Any]
    renames: Mapping[str, str]
    gate_open: bool
    registered: list[str]
    rejected: str | None


class _ParsedPath:
    """A :class:`Rewriter` without a bytes path, given one: parse, rewrite, serialise."""

    def __init__(self, rewriter: Rewriter) -> None:
        self.rewriter = rewriter

    def outbound(self, payload: dict[str, Any], model: str | None) -> OutboundLike:
        return self.rewriter.outbound(payload, model)

    def inbound(self, message: dict[str, Any], registered: list[str]) -> Any:
        return self.rewriter.inbound(message, registered)

    def stream(self, chunks: AsyncIterator[bytes], registered: list[str]) -> AsyncIterator[bytes]:
        return self.rewriter.stream(chunks, registered)

    def outbound_body(self, body: bytes) -> BodyOutcome:
        payload = jsonio.loads(body)
        fields = {k: v for k, v in payload.items() if k != "messages"}
        model = payload.get("model")
        result = self.rewriter.outbound(payload, model if isinstance(model, str) else None)
        out = jsonio.dumps(result.payload) if result.gate_open else body
        rejected = getattr(result, "rejected", None)  # test doubles need not say
        return _Parsed(out, fields, result.renames, result.gate_open, result.registered, rejected)

    def inbound_report(
        self, message: dict[str, Any], registered: list[str]
    ) -> tuple[Any, InboundReport]:
        return self.inbound(message, registered), InboundReport()

    def stream_report(
        self, chunks: AsyncIterator[bytes], registered: list[str], report: InboundReport
    ) -> AsyncIterator[bytes]:
        return self.stream(chunks, registered)


def body_rewriter(rewriter: Rewriter) -> BodyRewriter:
    """``rewriter`` itself when it has a bytes path, else adapted to one."""
    if hasattr(rewriter, "outbound_body"):
        return rewriter  # type: ignore[return-value]
    return _ParsedPath(rewriter)


class RuntimeRewriter:
    """:class:`Rewriter` over a compiled :class:`~bridge_rules.runtime.Runtime`.

    The gate's environment overrides (``gate.env``) are read from ``env``: by default the
    process environment as it was when the rewriter was made, as a server reads its
    settings at start-up (a lookup in ``os.environ`` that misses costs ~2 µs, twice a
    request).
    """

    def __init__(self, runtime: Runtime, env: Mapping[str, str] | None = None) -> None:
        self.runtime = runtime
        self.env = dict(os.environ) if env is None else env
        # Calls whose repair stripped a pipeline, by tool_use id: the next request's matching
        # tool_result gets the pipeline applied (bounded; only when the rules strip any).
        self.memory = CallMemory() if runtime.repairs.internal else None
        self.sealer = MemorySealer(self.memory) if self.memory is not None else None

    def outbound(self, payload: dict[str, Any], model: str | None) -> OutboundLike:
        if self.memory is not None:
            payload = apply_results(payload, self.memory)
        return rewrite_outbound(self.runtime, payload, model, self.env)

    def inbound(self, message: dict[str, Any], registered: list[str]) -> Any:
        return rewrite_message(self.runtime, message, registered, self.sealer)

    def inbound_report(
        self, message: dict[str, Any], registered: list[str]
    ) -> tuple[Any, InboundReport]:
        report = InboundReport()
        out = rewrite_message(self.runtime, message, registered, self.sealer, report)
        return out, report

    def stream(self, chunks: AsyncIterator[bytes], registered: list[str]) -> AsyncIterator[bytes]:
        return rewrite_stream_async(self.runtime, chunks, registered, self.sealer)

    def stream_report(
        self, chunks: AsyncIterator[bytes], registered: list[str], report: InboundReport
    ) -> AsyncIterator[bytes]:
        return rewrite_stream_async(self.runtime, chunks, registered, self.sealer, report)

    def outbound_body(self, body: bytes) -> BodyOutcome:
        # The caller pauses the collector around the whole synchronous stretch.
        return rewrite_outbound_bytes(
            self.runtime,
            body,
            env=self.env,
            loads=jsonio.loads,
            dumps=jsonio.dumps,
            gc_pause=False,
            memory=self.memory,
        )
