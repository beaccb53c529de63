"""``bridge-rules transform outbound|inbound|stream``: the payload rewriters from a shell.

JSON in, JSON out (``outbound``: a request body; ``inbound``: a response
message); ``stream`` copies an SSE response through the stream rewriter chunk
by chunk, so it also works at the end of a pipe from ``curl -N``.
"""

from __future__ import annotations

import sys
from typing import IO, Annotated, Any, Optional

import typer

from bridge_rules.cli.app import (
    CommandError,
    Group,
    RulesOption,
    app,
    fail,
    load_engine,
    split_names,
)
from bridge_rules.diagnostics import EXIT_FINDINGS, EXIT_OK

transform_app = typer.Typer(
    cls=Group,
    name="transform",
    help="Rewrite Anthropic Messages requests, responses and SSE streams with the rules.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(transform_app, name="transform")

FileArg = Annotated[
    str, typer.Argument(help="The input file, or '-' for standard input.", metavar="FILE|-")
]
RegisteredOption = Annotated[
    Optional[str],  # noqa: UP045 - typer needs Optional on 3.10
    typer.Option(
        help="Comma-separated local tool names the client has (default: every name the rules "
        "know). The proxy uses the request's own tools.",
        metavar="NAME,...",
    ),
]
PrettyOption = Annotated[bool, typer.Option("--pretty", help="Indent the JSON output.")]
RequestOption = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option(
        "--request",
        help="The request this answers (a JSON file): its tools' schemas, as converted for "
        "`schemas.target`, say how calls come back (default: the rules' local_pin).",
        metavar="FILE",
    ),
]
_CHUNK = 1 << 16


def _open(path: str) -> IO[bytes]:
    if path == "-":
        return sys.stdin.buffer
    try:
        return open(path, "rb")
    except OSError as exc:
        fail(f"{path}: cannot read: {exc.strerror or exc}")


def _read_json(path: str) -> Any:
    """The payload, exactly: integers of any size, nesting of any depth (past about 1,000
    levels, up to ``jsonio.STACK_PARSER_LIMIT`` characters; ``bridge_rules.jsonio``)."""
    from bridge_rules import jsonio

    with _open(path) as handle:
        raw = handle.read()
    try:
        return jsonio.loads(raw)
    except (jsonio.JSONDecodeError, RecursionError) as exc:
        where = "<stdin>" if path == "-" else path
        line, col = getattr(exc, "lineno", 1), getattr(exc, "colno", 1)
        reason = getattr(exc, "msg", None) or "nested too deeply"
        what = "cannot read JSON" if isinstance(exc, jsonio.NestedTooDeep) else "invalid JSON"
        raise CommandError(f"{where}:{line}:{col}: error[BR501] {what}: {reason}") from None


def _write_json(value: Any, pretty: bool) -> None:
    import orjson

    from bridge_rules import jsonio

    try:
        data = orjson.dumps(value, option=orjson.OPT_INDENT_2) if pretty else jsonio.dumps(value)
    except TypeError:  # a big integer or a depth orjson refuses: exact, but not indented
        data = jsonio.dumps(value)
    sys.stdout.buffer.write(data + b"\n")
    sys.stdout.buffer.flush()


@transform_app.command()
def outbound(
    file: FileArg = "-",
    rules: RulesOption = None,
    model: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(help="Model id for the gate (default: the payload's 'model').", metavar="ID"),
    ] = None,
    pretty: PrettyOption = False,
    summary: Annotated[
        bool, typer.Option("--summary", help="Also print the gate and the renames to stderr.")
    ] = False,
) -> int:
    """Rewrite a request body (tools, tool_choice, history, system) for the wire.

    Exit status 1, with the reason on stderr and nothing on stdout, for a request the rules'
    `wire_names` refuse (the proxy answers it with a 400).
    """
    engine = load_engine(rules)
    payload = _read_json(file)
    result = engine.outbound(payload, model=model)
    if result.rejected:  # what the proxy answers with a 400: nothing would be sent
        sys.stderr.write(f"bridge-rules: error: request refused: {result.rejected}\n")
        return EXIT_FINDINGS
    _write_json(result.payload, pretty)
    if summary or not result.gate_open:
        state = "open" if result.gate_open else "closed, payload unchanged"
        sys.stderr.write(f"gate: {state} ({result.gate_reason})\n")
    if summary and result.gate_open:
        renames = ", ".join(f"{k} -> {v}" for k, v in result.renames.items()) or "none"
        sys.stderr.write(f"renames: {renames}\n")
        if result.dropped:
            sys.stderr.write(f"dropped by filters: {', '.join(result.dropped)}\n")
        sys.stderr.write(f"registered (for the response): {','.join(result.registered)}\n")
    return EXIT_OK


def _schemas(engine: Any, request: str | None, registered: str | None) -> tuple[Any, Any]:
    """(registered, shapes) for an answer: from the request it answers, else from the rules'
    local pin; stderr says which, so a call left in the wire's shape is never a surprise."""
    from bridge_rules.transform.pinned import pinned_shapes

    names = split_names(registered)
    if request is not None:
        result = engine.outbound(_read_json(request))
        said = f"the request {request} ({len(result.shapes)} converted)"
        if not result.gate_open:
            said = f"the request {request} (gate closed: nothing converted)"
        sys.stderr.write(f"schemas: from {said}\n")
        return (names if names is not None else result.registered), result.shapes
    pin = engine.runtime.rules.local_pin
    if pin is not None:
        shapes = pinned_shapes(engine.runtime, pin.tools)
        sys.stderr.write(f"schemas: from the local pin {pin.spec} ({len(shapes)} converted)\n")
        return names, shapes
    if engine.runtime.schema_book.profile.target not in (None, "anthropic"):
        sys.stderr.write(
            "schemas: none known (no --request FILE, no local_pin): arguments of calls to "
            "tools whose schemas were converted are not restored\n"
        )
    return names, None


@transform_app.command()
def inbound(
    file: FileArg = "-",
    rules: RulesOption = None,
    registered: RegisteredOption = None,
    request: RequestOption = None,
    pretty: PrettyOption = False,
) -> int:
    """Rewrite a non-streaming response message: tool calls back to local names and arguments."""
    engine = load_engine(rules)
    message = _read_json(file)
    names, shapes = _schemas(engine, request, registered)
    _write_json(engine.inbound(message, registered=names, shapes=shapes), pretty)
    return EXIT_OK


@transform_app.command()
def stream(
    file: FileArg = "-",
    rules: RulesOption = None,
    registered: RegisteredOption = None,
    request: RequestOption = None,
) -> int:
    """Rewrite an SSE response stream as it arrives; unchanged events are copied byte for byte."""
    engine = load_engine(rules)
    names, shapes = _schemas(engine, request, registered)
    out = sys.stdout.buffer
    with _open(file) as handle:
        read = getattr(handle, "read1", handle.read)
        chunks = iter(lambda: read(_CHUNK), b"")
        for piece in engine.inbound_stream(chunks, registered=names, shapes=shapes):
            out.write(piece)
            out.flush()
    return EXIT_OK
