"""BR322: a ``serve`` route fixes a model that refuses a forced ``tool_choice``, and the
route's rules send a forced one as it is.

A route's ``model:`` glob decides which requests it takes, so it fixes the models its
upstream is asked for. When the packaged ``models`` profile says one of those models refuses
``{"type": "any"}`` and ``{"type": "tool"}`` (Opus 5.5, Sonnet 5.5, Fable), and the route's
own rule set keeps a forced choice (an entry says ``keep``, or no entry decides, the
default), every request whose agent forces a tool comes back a 400 from the upstream, in the
middle of a session: pi-flows forcing ``finish``, a structured-output helper forcing its
tool. Rule files have no binding that forces a tool; the force comes from the agent, so the
route's rules are what decides. The finding is located at the route's ``model:`` in
``--config FILE`` and names the route; ``serve`` reports it as a warning when it starts.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from bridge_rules.compiler.models import packaged_models
from bridge_rules.diagnostics import Diagnostic, Related, warning
from bridge_rules.modelrules import ModelTable, Setting, matches
from bridge_rules.source import Span

FORCED = "tool_choice.forced"


@dataclass(frozen=True)
class FixedRoute:
    """A route that names a model glob, with the ``models:`` of the rules it serves with."""

    name: str
    model: str
    span: Span
    """Where the route's ``model:`` value is written."""
    table: ModelTable


def refusing(packaged: ModelTable) -> dict[str, Setting]:
    """Each model of the packaged profile that refuses a forced ``tool_choice`` (its entry
    sends ``auto`` or refuses), with the setting that says so."""
    known = {s.glob for s in packaged.settings} | {m.id for m in packaged.listed}
    out: dict[str, Setting] = {}
    for model in sorted(known):
        decision = packaged.decide(model)[FORCED]
        if decision.value != "keep" and decision.setting is not None:
            out[model] = decision.setting
    return out


def kept(route: FixedRoute, refused: dict[str, Setting]) -> list[str]:
    """The models ``route`` fixes that refuse a forced ``tool_choice`` while its rules keep
    one, in name order."""
    return [
        model
        for model in refused
        if matches(route.model, model) and route.table.decide(model)[FORCED].value == "keep"
    ]


def fixed_model_findings(
    routes: Iterable[FixedRoute], packaged: ModelTable | None = None
) -> Iterator[Diagnostic]:
    """One BR322 warning for each route that fixes such a model."""
    refused = refusing(packaged if packaged is not None else packaged_models()[0])
    for route in routes:
        models = kept(route, refused)
        if not models:
            continue
        decisions = [route.table.decide(m)[FORCED] for m in models]
        entries = sorted({d.where for d in decisions if d.setting is not None})
        why = "kept by " + "; ".join(entries) if entries else "no `models:` entry decides it"
        related = [Related(f"the packaged entry for {m}", refused[m].span) for m in models]
        related += [
            Related("the entry that keeps it", d.setting.span)
            for d in decisions
            if d.setting is not None
        ]
        yield warning(
            "BR322",
            f"route {route.name!r} takes model {route.model!r}: {', '.join(models)} "
            f"refuses a forced tool_choice, but the route's rules send one as it is ({why}), "
            "so a request that forces a tool gets a 400 from the upstream",
            route.span,
            related=tuple(dict.fromkeys(related)),
            hint="give the route rules that extend `models`, or set `tool_choice: "
            "{forced: auto}` (or `refuse`) for that model",
        )
