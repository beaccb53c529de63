"""The optional tracer: what the resolver did, step by step, as ``explain`` prints it.

The resolver reports each decision to a :class:`Tracer` as it makes it, when it
was given one; with none (the request path) it reports nothing and builds no
record. The resolver decides, the tracer only writes down, so the trace cannot
say anything the resolver did not do.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bridge_rules.source import Span
from bridge_rules.stages import CompiledStage, Gateway, Hit, NameGuard, PrefixStage, Strip


@dataclass(frozen=True)
class StageStep:
    """One stage consulted for an outbound name."""

    index: int
    stage: str
    kind: str
    matched: bool
    detail: str
    span: Span

    def to_dict(self) -> dict[str, object]:
        return {
            "index": self.index,
            "stage": self.stage,
            "kind": self.kind,
            "matched": self.matched,
            "detail": self.detail,
            "location": str(self.span),
        }


@dataclass(frozen=True)
class ReverseEntry:
    """A reverse-map entry as a trace or a collision report shows it: who claimed the
    wire name (``local``), by which rule (``source``, e.g. "capitalize 'read: Read'"), where."""

    local: str
    source: str
    span: Span | None


@dataclass(frozen=True)
class InboundStep:
    """One lookup, strip or gateway undo tried for an inbound (wire) name."""

    action: str
    name: str
    result: str | None
    detail: str
    span: Span | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "action": self.action,
            "name": self.name,
            "result": self.result,
            "detail": self.detail,
            "location": str(self.span) if self.span else None,
        }


class Tracer:
    """Collects the steps of the resolutions it is handed to.

    ``stages``: outbound, one step per stage asked; ``inbound``: every lookup,
    strip and gateway undo, in order (gateway candidates recurse into the same list).
    """

    def __init__(self) -> None:
        self.stages: list[StageStep] = []
        self.inbound: list[InboundStep] = []

    # ----------------------------------------------------------- outbound
    def decided(
        self, name: str, stages: Sequence[CompiledStage], found: tuple[int, Hit] | None
    ) -> None:
        """Outbound: the stage at ``found`` decided (None: none did); every stage before
        it was passed over, for the reason that stage gives."""
        end = len(stages) if found is None else found[0]
        for stage in stages[:end]:
            self.stages.append(
                StageStep(stage.index, stage.id, stage.kind, False, stage.why_not(name), stage.span)
            )
        if found is not None:
            stage, hit = stages[found[0]], found[1]
            detail = f"matched {hit.rule} -> {hit.wire!r}"
            self.stages.append(StageStep(stage.index, stage.id, stage.kind, True, detail, hit.span))

    def shortened(self, wire: str, short: str, guard: NameGuard, index: int) -> None:
        """``wire_names.on_invalid: shorten`` replaced an invalid wire name."""
        detail = (
            f"'{wire}' is not a valid wire name (max {guard.max_length}, a-zA-Z0-9_-)"
            f" -> shortened to '{short}'"
        )
        span = guard.span if guard.span is not None else Span("<defaults>")
        self.stages.append(StageStep(index, "wire_names", "guard", True, detail, span))

    # ------------------------------------------------------------ inbound
    def looked_up(self, action: str, name: str, entry: ReverseEntry | None) -> None:
        """A reverse-map lookup (``exact`` or ``case-insensitive``) and the entry it found."""
        if entry is not None:
            detail = f"reverse entry from {entry.source}"
            self.inbound.append(InboundStep(action, name, entry.local, detail, entry.span))
        elif action == "exact":
            self.inbound.append(InboundStep(action, name, None, "no reverse entry"))
        else:
            self.inbound.append(InboundStep(action, name, None, "no reverse entry ignoring case"))

    def prefix_stripped(self, name: str, stripped: str, stage: PrefixStage) -> None:
        detail = f"stripped prefix {stage.value!r}"
        self.inbound.append(InboundStep("prefix-strip", name, stripped, detail, stage.span))

    def suffix(self, wire: str, strip: Strip, base: str | None) -> None:
        """An ``inbound.strip_suffixes`` entry, applied (``base``) or not (None)."""
        if base is None:
            detail = f"no suffix {strip.suffix!r} ({strip.case} case)"
        else:
            detail = f"stripped suffix {strip.suffix!r}"
        self.inbound.append(InboundStep("strip", wire, base, detail, strip.span))

    def gateway_undo(self, wire: str, candidate: str, detail: str, span: Span | None) -> None:
        self.inbound.append(InboundStep("gateway", wire, candidate, detail, span))

    def gateway_compared(self, wire: str, found: str | None, gateway: Gateway) -> None:
        """``match_registered``: the wire name compared with the registered names."""
        how = f"compared with the registered names ({gateway.match_registered} case)"
        self.inbound.append(InboundStep("gateway", wire, found, how, gateway.span))
