#!/usr/bin/env python3
"""Regenerate the pinned Claude Code tool-input schemas in ``schemas/claude-code/``.

Maintainer script (needs node, npm and network access to the npm registry)::

    python scripts/pin_schemas.py 2.1.0 2.1.322 2.1.330       # rewrite the pins
    python scripts/pin_schemas.py --check 2.1.330               # exit 1 if a pin differs
    python scripts/pin_schemas.py 2.1.330 --runtime tests/pins/data/claude-code@2.1.330.json \
        --runtime tests/pins/data/claude-code-2.1.330.runtime.json

For each version, in a scratch directory: ``npm pack @anthropic-ai/claude-code@X``,
take ``package/sdk-tools.d.ts``, run ``ts-json-schema-generator@2.9.0 --type '*'
--no-type-check``, keep the ``*Input`` members of the ``ToolInputSchemas`` union,
undo the json-schema-to-typescript round trip (tuple unions folded back into
``minItems``/``maxItems`` arrays, ``* /`` back to ``*/`` in descriptions) and key
each schema by its model-facing tool name. This is the recipe (and the output
layout) of ``cc_pin.py`` described in the project's schema-pin notes, so a pin
made here is byte-identical to one made with that script. The output is
deterministic; ``schemas/SHA256SUMS`` records every pin's checksum.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "schemas"
GENERATOR = "ts-json-schema-generator@2.9.0"
# The recipe's name in the schema-pin notes; kept so outputs match pins made with it.
GENERATOR_NOTE = (
    "ts-json-schema-generator@2.9.0 (typescript 5.9.3) --type '*' --no-type-check; "
    "cc_pin.py post-processing"
)

# interface -> (tool name, evidence). Evidence: "runtime" (seen in a captured request),
# "bundle" (found in the CLI's JS), "inferred" (naming only).
INTERFACES: dict[str, tuple[str, str]] = {
    "AgentInput": ("Agent", "runtime"),
    "ArtifactInput": ("Artifact", "inferred"),
    "AskUserQuestionInput": ("AskUserQuestion", "runtime"),
    "MultipleChoiceQuestionInput": ("AskUserQuestion", "bundle"),
    "BashInput": ("Bash", "runtime"),
    "BashOutputInput": ("BashOutput", "bundle"),
    "ClaudeDesignInput": ("ClaudeDesign", "bundle"),
    "ConfigInput": ("Config", "bundle"),
    "CronCreateInput": ("CronCreate", "runtime"),
    "CronDeleteInput": ("CronDelete", "runtime"),
    "CronListInput": ("CronList", "runtime"),
    "FileEditInput": ("Edit", "runtime"),
    "FileMultiEditInput": ("MultiEdit", "bundle"),
    "EnterPlanModeInput": ("EnterPlanMode", "runtime"),
    "EnterWorktreeInput": ("EnterWorktree", "runtime"),
    "ExitPlanModeInput": ("ExitPlanMode", "runtime"),
    "ExitWorktreeInput": ("ExitWorktree", "runtime"),
    "GlobInput": ("Glob", "runtime"),
    "GrepInput": ("Grep", "runtime"),
    "KillShellInput": ("KillShell", "bundle"),
    "ListMcpResourcesInput": ("ListMcpResourcesTool", "runtime"),
    "LsInput": ("LS", "bundle"),
    "McpInput": ("mcp__*", "runtime"),
    "MonitorInput": ("Monitor", "runtime"),
    "NotebookEditInput": ("NotebookEdit", "runtime"),
    "NotebookReadInput": ("NotebookRead", "bundle"),
    "OfferChromeSetupInput": ("OfferChromeSetup", "bundle"),
    "ProjectsInput": ("Projects", "bundle"),
    "ProposeGoalInput": ("SetGoal", "bundle"),
    "ProposeSkillsInput": ("propose_skills", "bundle"),
    "PushNotificationInput": ("PushNotification", "bundle"),
    "FileReadInput": ("Read", "runtime"),
    "ReadMcpResourceDirInput": ("ReadMcpResourceDirTool", "runtime"),
    "ReadMcpResourceInput": ("ReadMcpResourceTool", "runtime"),
    "ReadNotificationsInput": ("ReadNotifications", "bundle"),
    "RefreshMcpToolsInput": ("RefreshMcpTools", "runtime"),
    "RemoteTriggerInput": ("RemoteTrigger", "bundle"),
    "ReportFindingsInput": ("ReportFindings", "runtime"),
    "ScheduleWakeupInput": ("ScheduleWakeup", "runtime"),
    "SendFeedbackInput": ("SendFeedback", "bundle"),
    "ShowOnboardingRolePickerInput": ("ShowOnboardingRolePicker", "bundle"),
    "TaskCreateInput": ("TaskCreate", "runtime"),
    "TaskGetInput": ("TaskGet", "runtime"),
    "TaskListInput": ("TaskList", "runtime"),
    "TaskOutputInput": ("TaskOutput", "bundle"),
    "TaskStopInput": ("TaskStop", "runtime"),
    "TaskUpdateInput": ("TaskUpdate", "runtime"),
    "TodoWriteInput": ("TodoWrite", "runtime"),
    "WebFetchInput": ("WebFetch", "runtime"),
    "WebSearchInput": ("WebSearch", "runtime"),
    "WorkflowInput": ("Workflow", "runtime"),
    "FileWriteInput": ("Write", "runtime"),
}
# Names the model-facing tools had before a rename: (interface, last version, old name).
RENAMES = [("AgentInput", (2, 1, 62), "Task"), ("ExitPlanModeInput", (1, 0, 53), "exit_plan_mode")]
# tool -> other names the CLI accepts for it (order kept in the output).
ALIASES: list[tuple[str, list[str]]] = [
    ("Agent", ["Task"]),
    ("TaskStop", ["KillShell", "KillBash"]),
    ("SetGoal", ["ProposeGoal"]),
    ("Workflow", ["RunWorkflow"]),
    ("ListMcpResourcesTool", ["ListMcpResources"]),
    ("ReadMcpResourceTool", ["ReadMcpResource"]),
    ("ReadMcpResourceDirTool", ["ReadMcpResourceDir"]),
    ("TaskOutput", ["AgentOutputTool", "BashOutputTool"]),
]


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def tool_name(interface: str, version: str) -> tuple[str, str]:
    name, evidence = INTERFACES[interface]
    for iface, last, old in RENAMES:
        if iface == interface and version_key(version) <= last:
            return old, "bundle"
    return name, evidence


# ----------------------------------------------------------------- folding
def _fold_tuple_union(node: dict[str, Any]) -> dict[str, Any] | None:
    """``[X] | [X, X] | ...`` (anyOf of fixed-length arrays) -> one array with bounds."""
    alts = node.get("anyOf")
    if not isinstance(alts, list) or not alts:
        return None
    item: Any = None
    lengths = []
    for alt in alts:
        if not isinstance(alt, dict) or alt.get("type") != "array":
            return None
        items = alt.get("items")
        elements = items if isinstance(items, list) else [items]
        count = alt.get("minItems")
        if count != alt.get("maxItems") or count != len(elements) or "additionalItems" in alt:
            return None
        for element in elements:
            if item is None:
                item = element
            elif element != item:
                return None
        lengths.append(count)
    folded = {k: v for k, v in node.items() if k != "anyOf"}
    folded.update(maxItems=max(lengths), minItems=min(lengths), type="array", items=item)
    return folded


def _fold_rest(node: dict[str, Any]) -> None:
    """``[X, ...X[]]`` (items: [X] + additionalItems: X) -> ``items: X`` with minItems."""
    items, rest = node.get("items"), node.get("additionalItems")
    if isinstance(items, list) and isinstance(rest, dict) and all(i == rest for i in items):
        del node["additionalItems"]
        node["items"] = rest
        node["minItems"] = max(node.get("minItems", 0), len(items))


def postprocess(node: Any, key: str | None = None) -> Any:
    if isinstance(node, list):
        return [postprocess(v) for v in node]
    if isinstance(node, str):
        return node.replace("* /", "*/") if key == "description" else node
    if not isinstance(node, dict):
        return node
    out = {k: postprocess(v, k) for k, v in node.items()}
    _fold_rest(out)
    return _fold_tuple_union(out) or out


# -------------------------------------------------------------- self-check
def _interface_block(dts: str, interface: str) -> str | None:
    match = re.search(rf"^export interface {interface} \{{\n(.*?)^\}}", dts, re.M | re.S)
    return match.group(1) if match else None


def self_check(dts: str, interface: str, schema: dict[str, Any]) -> list[str]:
    """Top-level properties and required set of the schema vs the d.ts text."""
    block = _interface_block(dts, interface)
    if block is None:
        return []
    declared = {
        m.group(1).strip('"'): m.group(2) == ""
        for m in re.finditer(r'^  ("[^"]+"|[\w$-]+)(\??):', block, re.M)
    }
    problems = []
    props = set(schema.get("properties", {}))
    if props != set(declared):
        problems.append(f"{interface}: properties {sorted(props ^ set(declared))} differ")
    required = set(schema.get("required", []))
    if required != {k for k, req in declared.items() if req}:
        problems.append(f"{interface}: required set differs")
    return problems


# ------------------------------------------------------------------- build
def build_pin(
    version: str, dts: str, generated: dict[str, Any]
) -> tuple[dict[str, Any], list[str]]:
    definitions = generated["definitions"]
    members = [r["$ref"].rsplit("/", 1)[1] for r in definitions["ToolInputSchemas"]["anyOf"]]
    inputs = [m for m in members if m.endswith("Input")]
    tools: dict[str, Any] = {}
    wildcard: dict[str, Any] = {}
    interfaces: dict[str, str] = {}
    evidence: dict[str, str] = {}
    problems: list[str] = []
    for interface in inputs:
        if interface not in INTERFACES:
            problems.append(f"{interface}: no tool name known; add it to INTERFACES")
            continue
        name, how = tool_name(interface, version)
        schema = postprocess(definitions[interface])
        problems += self_check(dts, interface, schema)
        (wildcard if name == "mcp__*" else tools)[name] = schema
        interfaces[name] = interface
        evidence[name] = how

    def ordered(table: dict[str, Any]) -> dict[str, Any]:
        return {k: table[k] for k in sorted(table, key=str.lower)}

    aliases = {t: names for t, names in ALIASES if t in tools}
    pin = {
        "source": f"npm:@anthropic-ai/claude-code@{version} sdk-tools.d.ts",
        "generator": GENERATOR_NOTE,
        "$schema": generated.get("$schema", "http://json-schema.org/draft-07/schema#"),
        "tools": ordered(tools),
        "wildcard_tools": wildcard,
        "interfaces": ordered(interfaces),
        "aliases": aliases,
        "mapping_evidence": ordered(evidence),
    }
    pin["provenance"] = provenance(pin, version)
    return pin, problems


def provenance(pin: dict[str, Any], version: str) -> dict[str, Any]:
    """How the pin was made (docs/pins.md); deterministic, so a rebuilt pin is byte-identical."""
    sources: list[dict[str, Any]] = [{"method": "type-declarations", "source": pin["source"]}]
    captured = sorted(n for n, how in pin["mapping_evidence"].items() if how == "runtime-capture")
    if captured:
        sources.append(
            {
                "method": "runtime-capture",
                "source": f"npm:@anthropic-ai/claude-code@{version}: bridge-rules pin capture",
                "tools": captured,
            }
        )
    return {
        "method": "+".join(s["method"] for s in sources),
        "agent": "claude-code",
        "version": version,
        "sha256": tools_digest(pin["tools"]),
        "sources": sources,
    }


def tools_digest(tools: dict[str, Any]) -> str:
    """``bridge_rules.pins.tools_digest`` again: the script runs without the package."""
    text = json.dumps(tools, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def add_runtime_tools(pin: dict[str, Any], captured: dict[str, Any], version: str) -> list[str]:
    """Add the tools a runtime capture has and the d.ts lacks (Skill, SendMessage, ListAgents).

    A runtime capture is the truth for which tools exist; the d.ts only declares the
    tools that have an input interface. ``captured`` is a pin made by ``bridge-rules pin
    capture`` (or a ``{name: input_schema}`` table). Returns the names added.
    """
    tools = captured.get("tools", captured)
    sent = set(tools)
    for source in captured.get("provenance", {}).get("sources", []):
        sent.update(source.get("tools", []))
    known = set(pin["tools"]) | {a for names in pin["aliases"].values() for a in names}
    added = sorted(n for n in tools if n not in known and not n.startswith("mcp__"))
    for name in added:
        entry = tools[name]
        schema = dict(entry.get("input_schema", entry))
        schema.pop("$schema", None)
        pin["tools"][name] = schema
        pin["mapping_evidence"][name] = "runtime-capture"
    for key in ("tools", "mapping_evidence"):
        pin[key] = {k: pin[key][k] for k in sorted(pin[key], key=str.lower)}
    mark_declared_only(pin, sent)
    return added


def mark_declared_only(pin: dict[str, Any], sent: set[str]) -> None:
    """List the tools only the d.ts has: no runtime capture of this version sent them.

    The binary never offers such a tool in the captured configurations (its feature is
    gated off, or it is internal), so bridge-rules does not treat its name as canonical
    unless a rule asks (``include_declared``). Several captures add up: a tool any of
    them sent is not declared-only. ``declared_only`` goes before ``provenance``.
    """
    seen = set(pin.pop("_sent", [])) | set(sent)
    pin.pop("declared_only", None)
    provenance_ = pin.pop("provenance", None)
    pin["declared_only"] = sorted((n for n in pin["tools"] if n not in seen), key=str.lower)
    pin["_sent"] = sorted(seen)
    pin["provenance"] = provenance_


def capture_version(doc: dict[str, Any]) -> str | None:
    """The version a capture is of: its ``version``, or the ``...@X`` of its ``source`` (the
    older capture files, ``tests/pins/data/claude-code-2.1.330.runtime.json``)."""
    if doc.get("version"):
        return str(doc["version"])
    found = re.search(r"@([0-9][0-9A-Za-z.+-]*)\b", str(doc.get("source", "")))
    return found.group(1) if found else None


def render(pin: dict[str, Any]) -> str:
    shown = {k: v for k, v in pin.items() if not k.startswith("_")}  # "_sent": bookkeeping
    return json.dumps(shown, indent=1, ensure_ascii=False) + "\n"


def _run(cmd: list[str], cwd: Path) -> str:
    done = subprocess.run(cmd, cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout


def fetch_and_generate(version: str, scratch: Path) -> tuple[str, dict[str, Any]]:
    if not (scratch / "node_modules" / ".bin" / "ts-json-schema-generator").exists():
        _run(["npm", "init", "-y"], scratch)
        _run(["npm", "install", "--no-audit", "--no-fund", GENERATOR], scratch)
    tarball = _run(["npm", "pack", f"@anthropic-ai/claude-code@{version}"], scratch).split()[-1]
    target = scratch / version
    target.mkdir(exist_ok=True)
    with tarfile.open(scratch / tarball) as archive:
        member = archive.getmember("package/sdk-tools.d.ts")
        extracted = archive.extractfile(member)
        assert extracted is not None
        dts_path = target / "sdk-tools.d.ts"
        dts_path.write_bytes(extracted.read())
    out = _run(
        [
            "npx",
            "--no-install",
            "ts-json-schema-generator",
            "--path",
            str(dts_path),
            "--type",
            "*",
            "--no-type-check",
        ],
        scratch,
    )
    return dts_path.read_text(encoding="utf-8"), json.loads(out)


def write_sums() -> None:
    lines = []
    for path in sorted(SCHEMAS.glob("*/*.json")):  # the pins; not the generated rule schema
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        lines.append(f"{digest}  {path.relative_to(SCHEMAS).as_posix()}\n")
    (SCHEMAS / "SHA256SUMS").write_text("".join(lines), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("versions", nargs="*", help="Claude Code versions, e.g. 2.1.330")
    parser.add_argument("--check", action="store_true", help="compare, write nothing")
    parser.add_argument("--scratch", type=Path, help="reuse this scratch directory")
    parser.add_argument("--sums-only", action="store_true", help="only rewrite SHA256SUMS")
    parser.add_argument(
        "--runtime",
        type=Path,
        action="append",
        default=[],
        metavar="PIN",
        help="a runtime capture of one of the versions (bridge-rules pin capture); its tools "
        "that the d.ts lacks are added. Repeat for several versions.",
    )
    args = parser.parse_args(argv)
    if args.sums_only:
        write_sums()
        return 0
    status = 0
    with tempfile.TemporaryDirectory() as tmp:
        scratch = args.scratch or Path(tmp)
        scratch.mkdir(parents=True, exist_ok=True)
        for version in args.versions:
            dts, generated = fetch_and_generate(version, scratch)
            pin, problems = build_pin(version, dts, generated)
            for capture in args.runtime:
                doc = json.loads(capture.read_text(encoding="utf-8"))
                if capture_version(doc) == version:
                    add_runtime_tools(pin, doc, version)
            for problem in problems:
                sys.stderr.write(f"{version}: self-check: {problem}\n")
            text = render(pin)
            path = SCHEMAS / "claude-code" / f"{version}.json"
            digest = hashlib.sha256(text.encode()).hexdigest()
            if args.check:
                same = path.is_file() and path.read_text(encoding="utf-8") == text
                sys.stdout.write(f"{version}: {'identical' if same else 'DIFFERS'} ({digest})\n")
                status |= 0 if same else 1
            else:
                path.write_text(text, encoding="utf-8")
                sys.stdout.write(f"{version}: wrote {path.relative_to(ROOT)} ({digest})\n")
    if not args.check:
        write_sums()
    return status


if __name__ == "__main__":
    sys.exit(main())
