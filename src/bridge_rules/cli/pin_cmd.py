"""``bridge-rules pin``: capture, import, list, show, diff and check pins.

Exit status: 0 done, 1 a capture that yielded no tools (timeout, agent error, no
tools) or a pin file with problems (``check``), 2 usage error or unreadable input.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from bridge_rules.cli.app import CommandError, Group, app, fail
from bridge_rules.cli.gateway_capture import ModelsOption, ProtocolOption, pin_spec
from bridge_rules.diagnostics import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE

if TYPE_CHECKING:
    from bridge_rules.pins import Pin

pin_app = typer.Typer(
    cls=Group,
    name="pin",
    help="Pins: the tool surface of one agent version. Capture, import, list, show, diff.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(pin_app, name="pin")

FormatOption = Annotated[str, typer.Option("--format", "-f", help="text or json.")]
OutOption = Annotated[
    Optional[Path],  # noqa: UP045 - typer needs Optional on 3.10
    typer.Option(
        "--out", "-o", help="Pin file to write. Default: .bridge-rules/pins/NAME@VERSION.json."
    ),
]
MergeOption = Annotated[
    bool, typer.Option("--merge", help="Add the tools to an existing pin of the same version.")
]
ForceOption = Annotated[bool, typer.Option("--force", help="Overwrite an existing pin file.")]


def _destination(spec: str, out: Path | None) -> Path:
    from bridge_rules.pins import PROJECT_DIR

    return out if out is not None else PROJECT_DIR / f"{spec}.json"


def _save(document: dict[str, Any], path: Path, *, merge: bool, force: bool) -> str:
    """Write a new pin, or merge into the one at ``path``; returns what was done."""
    from bridge_rules.capture.document import DocumentError, write
    from bridge_rules.capture.document import merge as merge_docs

    if path.exists() and merge:
        try:
            old = json.loads(path.read_text(encoding="utf-8"))
            before = set(old.get("tools", {}))
            document, differ = merge_docs(old, document)
        except (OSError, ValueError, DocumentError) as exc:
            fail(f"cannot merge into {path}: {exc}")
        added = sorted(set(document["tools"]) - before)
        note = f"merged {len(added)} new tool(s) ({', '.join(added) or 'none'})"
        if differ:
            note += f"; kept the existing schema of {', '.join(differ)} (it differs)"
    elif path.exists() and not force:
        fail(f"{path} exists; use --merge to add to it or --force to replace it")
    else:
        note = f"{len(document['tools'])} tool(s)"
    try:
        write(document, path)
    except OSError as exc:
        fail(f"cannot write {path}: {exc}")
    return f"wrote {path}: {note}"


def _env(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            fail(f"--env takes KEY=VALUE, not '{pair}'")
        out[key] = value
    return out


@pin_app.command()
def capture(
    spec: Annotated[str, typer.Argument(metavar="NAME@VERSION", help="The pin to make.")],
    command: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Argument(metavar="-- COMMAND [ARGS...]", help="The agent to run."),
    ] = None,
    *,
    models: ModelsOption = None,
    protocol: ProtocolOption = None,
    out: OutOption = None,
    template: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option(
            "--template",
            "-t",
            help="A config file with {url} in it; rendered to a scratch file named {config} "
            "(its directory: {config_dir}) for the command and --env to refer to.",
        ),
    ] = None,
    env: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Option("--env", "-e", help="KEY=VALUE for the agent; placeholders work here."),
    ] = None,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for the agent.")] = 120.0,
    stdin: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--stdin", help="A file for the agent's stdin (default: empty)."),
    ] = None,
    merge: MergeOption = False,
    force: ForceOption = False,
) -> int:
    """Run an agent against a local capture endpoint and pin the tools it sends.

    The endpoint (127.0.0.1, a free port) is in the agent's ANTHROPIC_BASE_URL and
    replaces {url} in its arguments; it answers every request with a short text
    reply. {tmp} is a scratch directory (for a private HOME). See docs/pins.md.
    With --models or --protocol it records that endpoint's answer instead
    (.bridge-rules/captures/NAME@VERSION.json; docs/models.md).
    """
    if models is not None or protocol is not None:
        from bridge_rules.cli.gateway_capture import capture_gateway

        return capture_gateway(spec, models, protocol, out, force=force)
    if not command:
        fail("give the agent to run after --, or --models URL, or --protocol URL")
    from bridge_rules.capture.document import build, now, tool_entries
    from bridge_rules.capture.run import CaptureError
    from bridge_rules.capture.run import capture as run_capture

    pin_spec(spec)
    for option, given in (("--template", template), ("--stdin", stdin)):
        if given is not None and not given.is_file():
            fail(f"{option} {given}: no such file")
    path = _destination(spec, out)
    if path.exists() and not (merge or force):
        fail(f"{path} exists; use --merge to add to it or --force to replace it")
    try:
        got = run_capture(
            command, template=template, env=_env(env or []), timeout=timeout, stdin=stdin
        )
    except CaptureError as exc:
        tail = ["  agent stderr (last lines):", *(f"    {line}" for line in exc.tail.splitlines())]
        raise CommandError(
            f"bridge-rules: error: pin capture {spec}: {exc}",
            *(tail if exc.tail else ()),
            code=EXIT_USAGE if exc.kind == "no-agent" else EXIT_FINDINGS,
        ) from None
    if got.returncode is None:
        sys.stderr.write(f"bridge-rules: warning: stopped the agent after {timeout:g} s\n")
    elif got.returncode != 0:
        sys.stderr.write(f"bridge-rules: warning: the agent exited with {got.returncode}\n")
    tools = tool_entries(got.tools)
    source = {
        "method": "runtime-capture",
        "date": now(),
        "program": Path(command[0]).name,
        "user_agent": got.user_agent,
        "tools": sorted(tools),
    }
    sys.stdout.write(_save(build(spec, tools, source), path, merge=merge, force=force) + "\n")
    return EXIT_OK


@pin_app.command("import")
def import_(
    file: Annotated[Path, typer.Argument(help="A request body as an agent sent it (JSON).")],
    name: Annotated[str, typer.Option("--name", metavar="NAME@VERSION", help="The pin to make.")],
    out: OutOption = None,
    merge: MergeOption = False,
    force: ForceOption = False,
) -> int:
    """Make a pin from a captured request body's tools[]."""
    from bridge_rules.capture.document import DocumentError, build, now, request_tools, tool_entries

    pin_spec(name)
    try:
        tools = tool_entries(request_tools(json.loads(file.read_text(encoding="utf-8"))))
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"cannot read {file}: {exc}")
    except (ValueError, DocumentError) as exc:
        fail(f"{file}: {exc}")
    if not tools:
        fail(f"{file}: the request has no tools")
    source = {"method": "import", "date": now(), "file": file.name, "tools": sorted(tools)}
    path = _destination(name, out)
    sys.stdout.write(_save(build(name, tools, source), path, merge=merge, force=force) + "\n")
    return EXIT_OK


def _format(fmt: str) -> str:
    if fmt not in ("text", "json"):
        fail(f"unknown --format '{fmt}' (choose text or json)")
    return fmt


def _load(ref: str) -> Pin:
    """A pin by spec on the search path, or straight from a ``.json`` file."""
    from bridge_rules.pins import PinError, load_file, load_pin

    try:
        if ref.endswith(".json"):
            path = Path(ref)
            if not path.is_file():
                fail(f"{ref}: no such file")
            return load_file(path)
        return load_pin(ref)
    except PinError as exc:
        fail(exc.describe())


@pin_app.command("list")
def list_(fmt: FormatOption = "text") -> int:
    """Every pin on the search path: spec, where it was found, how it was made, when."""
    from bridge_rules.pins import PinError, entries, load_file, search_path

    _format(fmt)
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for directory in search_path():
        for spec, path in entries(directory.path):
            row: dict[str, Any] = {
                "pin": spec,
                "source": directory.origin,
                "location": str(path),
                "shadowed": spec in seen,
            }
            seen.add(spec)
            try:
                provenance = load_file(path, spec).provenance
                row |= {"method": provenance.get("method") or "-", "date": provenance.get("date")}
            except PinError as exc:
                row |= {"method": "invalid", "date": None, "problem": str(exc)}
            rows.append(row)
    if fmt == "json":
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return EXIT_OK
    table = [
        [r["pin"], r["source"], r["method"], (r["date"] or "-")[:10], r["location"]]
        + (["(shadowed)"] if r["shadowed"] else [])
        for r in rows
    ]
    widths = [max((len(cells[i]) for cells in table), default=0) for i in range(4)]
    for cells in table:
        padded = [c.ljust(w) for c, w in zip(cells, widths, strict=False)] + cells[4:]
        sys.stdout.write("  ".join(padded).rstrip() + "\n")
    return EXIT_OK


def _fields(schema: dict[str, Any]) -> str:
    required = set(schema.get("required", []))
    names = [n if n in required else n + "?" for n in schema.get("properties") or {}]
    return ", ".join(names)


@pin_app.command()
def show(
    ref: Annotated[str, typer.Argument(metavar="NAME@VERSION|FILE")],
    tool: Annotated[Optional[str], typer.Argument(help="One tool, in full.")] = None,  # noqa: UP045
    fmt: FormatOption = "text",
) -> int:
    """A pin's provenance and tools, or one tool's description and input schema."""
    import difflib

    _format(fmt)
    pin = _load(ref)
    if tool is not None:
        if pin.schema(tool) is None:
            close = difflib.get_close_matches(tool, list(pin.tools), n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            fail(f"{pin.spec} has no tool '{tool}'{hint}")
        entry = {
            "name": tool,
            "description": pin.descriptions.get(tool),
            "input_schema": pin.schema(tool),
        }
        sys.stdout.write(json.dumps(entry, indent=2, ensure_ascii=False) + "\n")
        return EXIT_OK
    if fmt == "json":
        summary = {
            "pin": pin.spec,
            "source": pin.origin,
            "location": str(pin.path),
            "provenance": pin.provenance,
            "tools": sorted(pin.tools),
            "sent": sorted(pin.canonical_names()),
            "declared_only": sorted(pin.declared_only),
        }
        sys.stdout.write(json.dumps(summary, indent=2) + "\n")
        return EXIT_OK
    sys.stdout.write(f"{pin.spec}  {pin.origin}  {pin.path}\n")
    provenance = pin.provenance
    if provenance:
        made = f"  made by {provenance.get('method')}"
        made += f" on {provenance['date']}" if provenance.get("date") else ""
        sys.stdout.write(f"{made}, sha256 {str(provenance.get('sha256'))[:12]}\n")
    sys.stdout.write(f"  {len(pin.tools)} tools{_declared_summary(pin)}:\n")
    width = max((len(n) for n in pin.tools), default=0)
    for name, schema in pin.tools.items():
        mark = "  (declared only)" if name in pin.declared_only else ""
        sys.stdout.write(f"    {name:<{width}}  {_fields(schema)}{mark}\n".rstrip() + "\n")
    return EXIT_OK


def _declared_summary(pin: Pin) -> str:
    """Which names the binary sends, when the pin knows (a runtime capture marked the rest)."""
    if not pin.declared_only:
        return ""
    sent = len(pin.tools) - len(pin.declared_only)
    return (
        f", {sent} sent by the binary (canonical), {len(pin.declared_only)} only in its type "
        "declarations (marked; not canonical unless a rule says include_declared)"
    )


@pin_app.command()
def diff(
    old: Annotated[str, typer.Argument(metavar="A", help="NAME@VERSION or a pin file.")],
    new: Annotated[str, typer.Argument(metavar="B", help="NAME@VERSION or a pin file.")],
    fmt: FormatOption = "text",
) -> int:
    """Tools and fields that differ from A to B (the engine `drift` uses)."""
    from bridge_rules.drift import compare

    _format(fmt)
    report = compare(_load(old), _load(new))
    if fmt == "json":
        sys.stdout.write(json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(report.render_text())
    return EXIT_OK


@pin_app.command()
def check(files: Annotated[list[Path], typer.Argument(help="Pin files to validate.")]) -> int:
    """Validate pin files (the rules of schemas/pin.schema.json); exit 1 on a problem."""
    from bridge_rules.pins import check_document, tools_digest

    bad = 0
    for path in files:
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            fail(f"cannot read {path}: {exc}")
        problems = check_document(raw)
        recorded = raw.get("provenance", {}).get("sha256") if isinstance(raw, dict) else None
        if not problems and recorded and tools_digest(raw["tools"]) != recorded:
            problems.append("provenance.sha256: does not match the tools (edited by hand?)")
        for problem in problems:
            sys.stdout.write(f"{path}: error: {problem}\n")
        bad += bool(problems)
    if bad:
        return EXIT_FINDINGS
    sys.stdout.write(f"{len(files)} pin file(s) valid\n")
    return EXIT_OK
