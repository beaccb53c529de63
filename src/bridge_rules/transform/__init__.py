"""Whole-payload rewriting: requests out, responses and SSE streams back.

The functions here take a compiled :class:`~bridge_rules.runtime.Runtime` and
translate single calls only through the call seam (:mod:`bridge_rules.calls`),
so argument bindings live in one place. The public facade forwards to them:
``eng.outbound``, ``eng.inbound``, ``eng.inbound_stream`` and
``eng.inbound_stream_async``; the proxy calls them directly.
"""

from bridge_rules.transform.cached import OutboundBytes, rewrite_outbound_bytes
from bridge_rules.transform.inbound import rewrite_message
from bridge_rules.transform.outbound import OutboundResult, rewrite_outbound
from bridge_rules.transform.sse import StreamRewriter
from bridge_rules.transform.stream import rewrite_stream, rewrite_stream_async
from bridge_rules.transform.unmapped import HEADER as UNMAPPED_HEADER
from bridge_rules.transform.unmapped import UNMAPPED, InboundReport

__all__ = [
    "UNMAPPED",
    "UNMAPPED_HEADER",
    "InboundReport",
    "OutboundBytes",
    "OutboundResult",
    "StreamRewriter",
    "rewrite_message",
    "rewrite_outbound",
    "rewrite_outbound_bytes",
    "rewrite_stream",
    "rewrite_stream_async",
]
