"""BR313-BR316: the pinned tools' schemas and names against the APIs that receive them.

For every tool of the local pin, the schema a request would carry (after the
tool's binding) is checked against each API named by ``lint --target``,
``schemas.lint_targets`` or ``schemas.target``: what that API would reject, and
whether the rules' own conversion takes it away (BR314, information) or not
(BR313). A local tool that goes out under a Claude Code tool's name without a
binding, with a schema that does not fit the pinned one, is BR315; a known local tool
whose wire name such an API refuses (Gemini's rule differs from the Messages API's) is
BR316.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from bridge_rules.bindings.schema import advertised_schema
from bridge_rules.compose import SourcedFile
from bridge_rules.diagnostics import Diagnostic, Related, Severity, warning
from bridge_rules.lint.registry import LintContext, check
from bridge_rules.schemas import DEFAULT_TARGET
from bridge_rules.schemas import name_problem as target_name_problem
from bridge_rules.schemas.diff import fields
from bridge_rules.schemas.rejects import rejects
from bridge_rules.source import Span

_SHOWN = 3


def _local_pin_file(ctx: LintContext) -> SourcedFile | None:
    for file in reversed(ctx.files):
        if file.rules.local_pin is not None:
            return file
    return None


def _apis(ctx: LintContext) -> list[str]:
    named: list[str] = list(ctx.schema_targets)
    for file in ctx.files:
        if file.rules.schemas is not None:
            named.extend(file.rules.schemas.lint_targets)
    if ctx.rules.schemas_span is not None and ctx.rules.schemas.target is not None:
        named.append(ctx.rules.schemas.target)
    return list(dict.fromkeys(named))


def _sent(ctx: LintContext, name: str, schema: Any) -> Any:
    """The schema a request carries for ``name`` before conversion (its binding's choice)."""
    adapter = ctx.runtime.adapters.get(name)
    if adapter is None:
        return schema
    return advertised_schema(adapter, schema, ctx.rules.pin, ctx.rules.local_pin)


def _listing(problems: list[tuple[str, str]]) -> str:
    shown = [f"{ptr or '/'}: {what}" for ptr, what in problems[:_SHOWN]]
    more = len(problems) - _SHOWN
    return "; ".join(shown) + (f"; and {more} more" if more > 0 else "")


@check("schema-targets", codes=("BR313", "BR314"))
def schema_targets(ctx: LintContext) -> Iterator[Diagnostic]:
    """What each named API would refuse in the tools the local pin declares."""
    pin, file = ctx.local_pin, _local_pin_file(ctx)
    apis = _apis(ctx)
    if pin is None or file is None or not apis:
        return
    where = ctx.span(file, ("local_pin",), value=True)
    book = ctx.runtime.schema_book
    profile = ctx.rules.schemas
    related: tuple[Related, ...] = ()
    if ctx.rules.schemas_span is not None:
        related = (Related("the rules' schemas: setting", ctx.rules.schemas_span),)
    for name, schema in pin.tools.items():
        sent = _sent(ctx, name, schema)
        for api in apis:
            found = rejects(api, sent)
            if not found:
                continue
            label = f"{api} would reject the schema of {pin.spec} tool '{name}'"
            if profile.target == api and not rejects(api, book.conversion(sent).schema):
                rules = sorted({c.rule for c in book.conversion(sent).changes})
                yield Diagnostic(
                    "BR314",
                    Severity.INFO,
                    f"{label} ({_listing(found)}); the rules convert it ({', '.join(rules)})",
                    where,
                    related,
                )
            else:
                yield warning(
                    "BR313",
                    f"{label} ({_listing(found)}), and the rules do not convert it",
                    where,
                    related=related,
                    hint=f"set `schemas: {{target: {api}}}` for requests that go to {api}",
                )


@check("target-names", codes=("BR316",))
def target_names(ctx: LintContext) -> Iterator[Diagnostic]:
    """Wire names an API with its own name rule (Gemini) would refuse."""
    apis = [a for a in _apis(ctx) if a != DEFAULT_TARGET]
    if not apis:
        return
    spans = dict(ctx.rules.local_tools)
    for local in ctx.runtime.known_locals:
        wire = ctx.runtime.outbound_name(local)
        for api in apis:
            problem = target_name_problem(api, wire)
            if problem is not None and local in spans:
                named = f"'{local}'" if local == wire else f"'{local}' (sent as '{wire}')"
                yield warning(
                    "BR316",
                    f"tool {named}: the name {problem}",
                    spans[local],
                    hint="alias it to a name every API you send to accepts",
                )


def _differences(local: Any, canonical: Any) -> list[str]:
    mine, theirs = fields(local), fields(canonical)
    out = []
    for path, field in theirs.items():
        if "." in path or "[" in path:
            continue
        if path not in mine and field.required:
            out.append(f"{path} (required there) is missing")
        elif path in mine and mine[path].types and field.types and mine[path].types != field.types:
            out.append(f"{path} is {'|'.join(mine[path].types)}, not {'|'.join(field.types)}")
    for path, field in mine.items():
        if "." not in path and "[" not in path and path not in theirs:
            out.append(
                f"{path} is not a field there" + (" (and is required)" if field.required else "")
            )
    return out


@check("canonical-schema-fit", codes=("BR315",))
def canonical_schema_fit(ctx: LintContext) -> Iterator[Diagnostic]:
    """A local tool sent under a Claude Code name must take that tool's arguments."""
    pin, canon, file = ctx.local_pin, ctx.pin, _local_pin_file(ctx)
    if pin is None or canon is None or file is None:
        return
    where: Span = ctx.span(file, ("local_pin",), value=True)
    for name, schema in pin.tools.items():
        if name in ctx.runtime.adapters:
            continue
        wire = ctx.runtime.outbound_name(name)
        canonical = canon.tools.get(wire)
        if canonical is None:
            continue
        diffs = _differences(schema, canonical)
        if diffs:
            yield warning(
                "BR315",
                f"{pin.spec} tool '{name}' goes out as {canon.spec}'s '{wire}' without a "
                f"binding, but its schema differs: {'; '.join(diffs)}",
                where,
                hint=f"bind '{name}' to '{wire}' with the argument operations that map them",
            )
