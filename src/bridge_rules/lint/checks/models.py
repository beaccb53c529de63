"""BR320-BR321: ``models:`` entries against the packaged profile of the current models.

BR320: an entry keeps a forced ``tool_choice`` for a model the packaged profile says refuses
one (its entry sends ``auto`` or refuses): every such request would come back a 400 from the
upstream in the middle of a session. BR321: a glob that matches no model the profile lists
(a typo such as ``claude-sonet-5-5`` decides nothing, silently).
"""

from __future__ import annotations

from collections.abc import Iterator

from bridge_rules.compiler.models import packaged_models
from bridge_rules.diagnostics import Diagnostic, Related, warning
from bridge_rules.lint.registry import LintContext, check
from bridge_rules.modelrules import matches


@check("models", codes=("BR320", "BR321"))
def models(ctx: LintContext) -> Iterator[Diagnostic]:
    packaged, shown = packaged_models()
    known = sorted({s.glob for s in packaged.settings} | {m.id for m in packaged.listed})
    refusing = {
        s.glob: s
        for s in packaged.settings
        if s.field == "tool_choice.forced" and s.value != "keep"
    }
    for file in ctx.files:
        if shown is not None and file.doc.path == shown:
            continue
        for glob, entry in (file.rules.models or {}).items():
            if known and not any(matches(glob, model) for model in known):
                yield warning(
                    "BR321",
                    f"model glob {glob!r} matches no model of the packaged models profile "
                    f"({', '.join(known)})",
                    ctx.span(file, ("models", glob)),
                )
            forced = entry.tool_choice.forced if entry.tool_choice is not None else None
            if forced != "keep":
                continue
            for model, setting in refusing.items():
                if matches(glob, model):
                    yield warning(
                        "BR320",
                        f"models[{glob!r}] keeps a forced tool_choice, but {model} refuses "
                        "one (a 400 from the upstream); send `auto` or `refuse` instead",
                        ctx.span(file, ("models", glob, "tool_choice", "forced"), value=True),
                        related=(Related("the packaged entry", setting.span),),
                    )
