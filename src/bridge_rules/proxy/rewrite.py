"""The rules as the proxy applies them: a compiled Runtime and the transform functions.

The proxy calls the transform layer directly with the Runtime it was given (no
facade in between). :class:`Rewriter` is the seam its mechanics tests replace
with a double that rewrites visibly.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any, Protocol

from bridge_rules.runtime import Runtime
from bridge_rules.transform import rewrite_message, rewrite_outbound, rewrite_stream_async


class OutboundLike(Protocol):
    @property
    def payload(self) -> Any: ...
    @property
    def renames(self) -> Mapping[str, str]: ...
    @property
    def gate_open(self) -> bool: ...
    @property
    def registered(self) -> list[str]: ...


class Rewriter(Protocol):
    def outbound(self, payload: dict[str, Any], model: str | None) -> OutboundLike: ...
    def inbound(self, message: dict[str, Any], registered: list[str]) -> Any: ...
    def stream(
        self, chunks: AsyncIterator[bytes], registered: list[str]
    ) -> AsyncIterator[bytes]: ...


class RuntimeRewriter:
    """:class:`Rewriter` over a compiled :class:`~bridge_rules.runtime.Runtime`."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def outbound(self, payload: dict[str, Any], model: str | None) -> OutboundLike:
        return rewrite_outbound(self.runtime, payload, model)

    def inbound(self, message: dict[str, Any], registered: list[str]) -> Any:
        return rewrite_message(self.runtime, message, registered)

    def stream(self, chunks: AsyncIterator[bytes], registered: list[str]) -> AsyncIterator[bytes]:
        return rewrite_stream_async(self.runtime, chunks, registered)
