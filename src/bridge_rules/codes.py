"""The documented diagnostic codes: what each means, with a failing and a passing example.

Codes are stable and never reused. Ranges by phase:
BR0xx reading files, BR1xx the rule format, BR2xx compiling names,
BR3xx lint against pins, BR4xx argument bindings and repair, BR5xx payloads given to
``bridge-rules transform``.
``bridge-rules codes [CODE]`` prints these entries.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CodeDoc:
    code: str
    title: str
    summary: str
    bad: str
    good: str
    severity: str = "error"


_HEAD = "bridge-rules: 1\n"

CODES: dict[str, CodeDoc] = {}


def _add(*docs: CodeDoc) -> None:
    for doc in docs:
        if doc.code in CODES:  # pragma: no cover - programming error
            raise ValueError(f"diagnostic code {doc.code} defined twice")
        CODES[doc.code] = doc


_add(
    CodeDoc(
        "BR001",
        "file not found",
        "A rule file or directory named on the command line or in "
        "`extends` does not exist or cannot be read.",
        bad="extends: ./missing.yaml\n",
        good="extends: default\n",
    ),
    CodeDoc(
        "BR002",
        "not UTF-8",
        "Rule files are UTF-8 text. The position is the first byte that does not decode.",
        bad="name: caf\\xe9   # Latin-1 bytes\n",
        good="name: café\n",
    ),
    CodeDoc(
        "BR003",
        "YAML syntax error",
        "The file is not well-formed YAML.",
        bad=_HEAD + "names: [\n",
        good=_HEAD + "names: []\n",
    ),
    CodeDoc(
        "BR004",
        "duplicate key",
        "A mapping has the same key twice; YAML would silently keep one of them.",
        bad=_HEAD + "pin: claude-code@2.1.330\npin: claude-code@2.1.0\n",
        good=_HEAD + "pin: claude-code@2.1.330\n",
    ),
    CodeDoc(
        "BR005",
        "empty file",
        "The file holds no YAML document (only comments or nothing).",
        bad="# nothing here\n",
        good=_HEAD,
    ),
    CodeDoc(
        "BR006",
        "top level is not a mapping",
        "A rule file is a mapping of sections.",
        bad="- kind: prefix\n  value: mcp__pi__\n",
        good=_HEAD + "names:\n  - kind: prefix\n    value: mcp__pi__\n",
    ),
    CodeDoc(
        "BR007",
        "several documents",
        "A rule file holds exactly one YAML document; split several into several files.",
        bad=_HEAD + "---\n" + _HEAD,
        good=_HEAD,
    ),
    CodeDoc(
        "BR008",
        "unknown profile",
        "`extends` or `--rules` names a packaged profile that does not exist.",
        bad=_HEAD + "extends: pi-anthropic\n",
        good=_HEAD + "extends: pi-anthropic-messages\n",
    ),
    CodeDoc(
        "BR009",
        "extends cycle",
        "Files extend each other in a loop.",
        bad="# a.yaml\n" + _HEAD + "extends: ./b.yaml\n# b.yaml\n" + _HEAD + "extends: ./a.yaml\n",
        good="# a.yaml\n" + _HEAD + "extends: ./b.yaml\n# b.yaml\n" + _HEAD,
    ),
    CodeDoc(
        "BR010",
        "input too large",
        "The file is over 4 MiB, or its aliases expand to more than 200,000 nodes (an alias bomb).",
        bad="a: &a [x, x, x, x, x, x, x, x, x]\n"
        "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n# ... nested nine levels deep\n",
        good=_HEAD,
    ),
    CodeDoc(
        "BR101",
        "missing key",
        "A required key is absent.",
        bad=_HEAD + "names:\n  - kind: prefix\n",
        good=_HEAD + "names:\n  - kind: prefix\n    value: mcp__pi__\n",
    ),
    CodeDoc(
        "BR102",
        "unknown key",
        "A key the format does not define; often a typo, so the "
        "message suggests the nearest valid key.",
        bad=_HEAD + "names:\n  - kind: aliases\n    cse: exact\n    map: {}\n",
        good=_HEAD + "names:\n  - kind: aliases\n    case: exact\n    map: {}\n",
    ),
    CodeDoc(
        "BR103",
        "wrong type",
        "A value has the wrong type (e.g. a number where a name string belongs).",
        bad=_HEAD + "names:\n  - kind: aliases\n    map: {read: 1}\n",
        good=_HEAD + "names:\n  - kind: aliases\n    map: {read: Read}\n",
    ),
    CodeDoc(
        "BR104",
        "invalid choice",
        "A value is not one of the allowed words.",
        bad=_HEAD + "inbound:\n  case: lower\n",
        good=_HEAD + "inbound:\n  case: insensitive\n",
    ),
    CodeDoc(
        "BR105",
        "unsupported format version",
        "`bridge-rules:` names a format version this release cannot read.",
        bad="bridge-rules: 2\n",
        good="bridge-rules: 1\n",
    ),
    CodeDoc(
        "BR106",
        "invalid value",
        "A section is well-typed but inconsistent, e.g. a passthrough stage with nothing to match.",
        bad=_HEAD + "names:\n  - kind: passthrough\n",
        good=_HEAD + "names:\n  - kind: passthrough\n    prefix: mcp__\n",
    ),
    CodeDoc(
        "BR107",
        "unknown stage kind",
        "`kind` of a `names` stage is not one of canonical, "
        "passthrough, aliases, capitalize, prefix, bindings.",
        bad=_HEAD + "names:\n  - kind: alias\n    map: {}\n",
        good=_HEAD + "names:\n  - kind: aliases\n    map: {}\n",
    ),
    CodeDoc(
        "BR201",
        "invalid regex",
        "A `pattern` or gate `model` is not a valid Python regular expression.",
        bad=_HEAD + "gate:\n  model: '(claude'\n",
        good=_HEAD + "gate:\n  model: '(?i)claude'\n",
    ),
    CodeDoc(
        "BR202",
        "catastrophic backtracking",
        "A regular expression has a shape that can take "
        "exponential time on hostile input (nested quantifiers, overlapping repeated "
        "alternatives); it is refused before anything runs it.",
        bad=_HEAD + "gate:\n  model: '(\\w+)+$'\n",
        good=_HEAD + "gate:\n  model: '\\w+$'\n",
    ),
    CodeDoc(
        "BR203",
        "name collision",
        "Two local tools resolve to one wire name, so the API "
        "would reject the request (`tools: Tool names must be unique`) and the way back is "
        "ambiguous. Reported with the name inbound resolution picks.",
        bad=_HEAD + "names:\n  - kind: aliases\n    map: {find: Glob, ls: Glob}\n",
        good=_HEAD + "names:\n  - kind: aliases\n    map: {find: Glob}\n",
        severity="warning",
    ),
    CodeDoc(
        "BR204",
        "unknown pin",
        "`pin` or `local_pin` names a version with no pinned schemas in `schemas/`.",
        bad=_HEAD + "pin: claude-code@9.9.9\n",
        good=_HEAD + "pin: claude-code@2.1.330\n",
    ),
    CodeDoc(
        "BR205",
        "from_pin without a pin",
        "A canonical stage takes its names from the pin, but the rules declare none.",
        bad=_HEAD + "names:\n  - kind: canonical\n    from_pin: true\n",
        good=_HEAD + "pin: claude-code@2.1.330\nnames:\n  - kind: canonical\n    from_pin: true\n",
    ),
    CodeDoc(
        "BR206",
        "duplicate stage id",
        "Two stages of one file share an `id`, so overlays could not tell them apart.",
        bad=_HEAD
        + "names:\n  - {kind: aliases, id: t, map: {}}\n  - {kind: aliases, id: t, map: {}}\n",
        good=_HEAD
        + "names:\n  - {kind: aliases, id: t, map: {}}\n  - {kind: aliases, id: u, map: {}}\n",
    ),
)


_add(
    CodeDoc(
        "BR501",
        "invalid JSON input",
        "`bridge-rules transform outbound|inbound` read a body that is not JSON; the position "
        "is the line and column where parsing stopped. Nothing is written to stdout.",
        bad='{"model": "claude-sonnet-4-5", "messages": [],}\n',
        good='{"model": "claude-sonnet-4-5", "messages": []}\n',
    ),
)
