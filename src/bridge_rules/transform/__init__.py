"""Whole-payload rewriting: requests out, responses and SSE streams back.

Requests go out through a compiled :class:`~bridge_rules.runtime.Runtime`; answers come
back through a :class:`CallScope` (the runtime and what the request scopes), and single
calls are translated only through the call seam (:mod:`bridge_rules.calls`),
so argument bindings live in one place. The public facade forwards to them:
``eng.outbound``, ``eng.inbound``, ``eng.inbound_stream`` and
``eng.inbound_stream_async``; the proxy calls them directly.
"""

from bridge_rules.transform.cached import OutboundBytes, rewrite_outbound_bytes
from bridge_rules.transform.inbound import rewrite_message
from bridge_rules.transform.outbound import OutboundResult, rewrite_outbound
from bridge_rules.transform.report import HEADER as UNMAPPED_HEADER
from bridge_rules.transform.report import InboundReport
from bridge_rules.transform.scope import CallScope
from bridge_rules.transform.sse import StreamRewriter
from bridge_rules.transform.stream import rewrite_stream, rewrite_stream_async
from bridge_rules.transform.unmapped import UNMAPPED

__all__ = [
    "UNMAPPED",
    "UNMAPPED_HEADER",
    "CallScope",
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
