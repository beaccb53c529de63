"""Tool names at run time: outbound (local -> wire) and inbound (wire -> local).

One resolver does both (:mod:`.resolver`); :mod:`.outbound` decides a wire
name, :mod:`.reverse` builds the maps inbound reads, and :mod:`.trace` is the
optional tracer both directions report to, which ``explain`` prints.
"""

from bridge_rules.names.outbound import Outbound, name_problems
from bridge_rules.names.resolver import Resolver
from bridge_rules.names.reverse import Collision, ReverseMap
from bridge_rules.names.trace import InboundStep, ReverseEntry, StageStep, Tracer

__all__ = [
    "Collision",
    "InboundStep",
    "Outbound",
    "Resolver",
    "ReverseEntry",
    "ReverseMap",
    "StageStep",
    "Tracer",
    "name_problems",
]
