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
        "`extends` does not exist or cannot be read, or is not a regular file on a disk: a "
        "device, FIFO or socket, or a file or directory reached through `/proc` or `/sys`.",
        bad=_HEAD + "extends: ./missing.yaml\n",
        good=_HEAD + "extends: default\n",
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
        "BR011",
        "unsupported YAML feature",
        "Rule files are plain data: YAML tags (`!!omap`, `!!set`, `!!binary`, "
        "`!!python/...`, `!custom`) and merge keys (`<<: *base`) are refused where they "
        "are written. Share settings between files with `extends` instead.",
        bad=_HEAD + "base: &base {api: anthropic-messages}\ngate:\n  <<: *base\n",
        good=_HEAD + "gate:\n  api: anthropic-messages\n",
    ),
    CodeDoc(
        "BR012",
        "mapping key is not a string",
        "Every key in a rule file is a string. A number, boolean, null or date key, or a "
        "complex key (`? [a, b]`), is refused; quote a key that YAML would read as another type.",
        bad=_HEAD + "names:\n  - kind: aliases\n    map: {1: One}\n",
        good=_HEAD + "names:\n  - kind: aliases\n    map: {'1': One}\n",
    ),
    CodeDoc(
        "BR013",
        "number out of range",
        "Numbers must be finite (`.inf` and `.nan` are refused) and integers fit in 64 bits.",
        bad=_HEAD
        + "bindings:\n  - local: sleep\n    wire: Sleep\n    input:\n"
        + "      - scale: {timeout: .inf}\n",
        good=_HEAD
        + "bindings:\n  - local: sleep\n    wire: Sleep\n    input:\n"
        + "      - scale: {timeout: 1000}\n",
    ),
    CodeDoc(
        "BR014",
        "string is not valid Unicode",
        'A string holds a lone surrogate escape (`"\\ud800"`), which no UTF-8 text can carry.',
        bad=_HEAD + 'name: "\\ud800"\n',
        good=_HEAD + 'name: "\\u00e9"\n',
    ),
    CodeDoc(
        "BR015",
        "extends leaves the directory tree",
        "A file may only `extends` files in its own directory or below it (symlinks are "
        "followed before checking). This keeps a rule file from pulling in, and lint from "
        "echoing, files elsewhere on the machine. `bridge-rules --allow-outside` or "
        "`BRIDGE_RULES_ALLOW_OUTSIDE=1` allows it. Profiles named without a path are always "
        "allowed. Lint exits 2.",
        bad=_HEAD + "extends: /etc/bridge-rules/base.yaml\n",
        good=_HEAD + "extends: ./base.yaml\n# base.yaml\n" + _HEAD,
    ),
    CodeDoc(
        "BR101",
        "missing key",
        "A required key is absent.",
        bad=_HEAD + "bindings:\n  - local: web_search\n",
        good=_HEAD + "bindings:\n  - local: web_search\n    wire: WebSearch\n",
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
        "BR108",
        "unknown policy switch",
        "`policy.switches` names a switch neither the packaged `capabilities` profile "
        "(read_only, no_exec, no_web) nor a `policy.switch_table` of the rules defines.",
        bad=_HEAD + "policy:\n  switches: [readonly]\n",
        good=_HEAD + "policy:\n  switches: [read_only]\n",
    ),
    CodeDoc(
        "BR201",
        "invalid regex",
        "A gate `model`, a passthrough `pattern` or a `text` rule with `regex: true` is not "
        "a valid regular expression (RE2 syntax, see docs/rule-format.md), or a text rule's "
        "`replace` refers to a group its pattern does not have.",
        bad=_HEAD + "gate:\n  model: '(claude'\n",
        good=_HEAD + "gate:\n  model: '(?i)claude'\n",
    ),
    CodeDoc(
        "BR202",
        "regex needs backtracking",
        "Every pattern is compiled with RE2, which matches in time linear in the input, so "
        "a hostile model id or tool name cannot stall a proxy worker. A construct that only "
        "a backtracking engine can run (backreferences such as `\\1`, lookahead, "
        "lookbehind) is refused with RE2's reason.",
        bad=_HEAD + "gate:\n  model: '(claude)-\\1'\n",
        good=_HEAD + "gate:\n  model: '(claude)-claude'\n",
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
        "`pin` or `local_pin` names a pin found nowhere on the pin search path (`--pins`, "
        "`BRIDGE_RULES_PINS`, `.bridge-rules/pins/`, the user's pins, the packaged ones; see "
        "docs/pins.md). The message lists where it looked; `bridge-rules pin capture` makes one.",
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


# ------------------------------------------------------------------ lint (BR3xx)
_PIN = _HEAD + "pin: claude-code@2.1.330\n"
_LONG = "fetch_" + "x" * 52
_PREFIXED = "names:\n  - kind: prefix\n    value: mcp__pi__\n"

_add(
    CodeDoc(
        "BR301",
        "not a tool of the pin",
        "A canonical name, an alias or capitalize target that is not an `mcp__` name, or a "
        "binding's `wire` is not a tool of the pinned Claude Code version. The hint names the "
        "pinned versions that have it and the tool it is an alias of (drift, not a typo).",
        bad=_PIN + "names:\n  - kind: canonical\n    names: [TaskOutput, KillShell]\n",
        good=_PIN + "names:\n  - kind: canonical\n    names: [Read, TaskStop]\n",
    ),
    CodeDoc(
        "BR302",
        "renamed onto a pass-through name",
        "A renaming entry produces a wire name that the rules also list as passing through "
        "unchanged, so a local tool of that name and the renamed one would both be sent "
        "under it (`tools: Tool names must be unique`).",
        bad=_PIN + "names:\n  - {kind: canonical, names: [Read]}\n"
        "  - {kind: capitalize, map: {read: Read}}\n",
        good=_PIN + "names:\n  - {kind: canonical, names: [Write]}\n"
        "  - {kind: capitalize, map: {read: Read}}\n",
        severity="warning",
    ),
    CodeDoc(
        "BR303",
        "shadowed entry",
        "A table entry never applies because an earlier stage already decides every spelling "
        "it accepts. Reported at the loser, with the winning rule's location.",
        bad=_PIN + "names:\n  - {kind: aliases, id: first, map: {find: Glob}}\n"
        "  - {kind: aliases, id: second, map: {find: Grep}}\n",
        good=_PIN + "names:\n  - {kind: aliases, id: first, map: {find: Glob}}\n"
        "  - {kind: aliases, id: second, map: {search: Grep}}\n",
        severity="warning",
    ),
    CodeDoc(
        "BR304",
        "unreachable stage",
        "A stage after a catch-all `prefix` stage never sees a name: the prefix stage matches "
        "everything. Move the stage before it.",
        bad=_PIN + "names:\n  - {kind: prefix, value: mcp__pi__}\n"
        "  - {kind: capitalize, map: {read: Read}}\n",
        good=_PIN + "names:\n  - {kind: capitalize, map: {read: Read}}\n"
        "  - {kind: prefix, value: mcp__pi__}\n",
        severity="warning",
    ),
    CodeDoc(
        "BR305",
        "invalid wire name",
        "A wire name (written, or produced by a prefix stage for a known local tool) does not "
        "match `^[a-zA-Z0-9_-]{1,64}$`, so the Messages API rejects the request.",
        bad=_PIN + "names:\n  - kind: aliases\n    map: {search: 'mcp__web__search now'}\n",
        good=_PIN + "names:\n  - kind: aliases\n    map: {search: mcp__web__search_now}\n",
    ),
    CodeDoc(
        "BR306",
        "malformed MCP name",
        "A name or prefix starting with `mcp__` is not `mcp__<server>__<tool>` with a non-empty "
        "server segment free of `__`; Claude Code splits MCP names at the first `__` after "
        "`mcp__`, so the server and tool would be read wrongly.",
        bad=_PIN + "names:\n  - kind: prefix\n    value: mcp__my__pi__\n",
        good=_PIN + "names:\n  - kind: prefix\n    value: mcp__my_pi__\n",
    ),
    CodeDoc(
        "BR307",
        "too long once prefixed",
        "A known local tool fits the 64-character limit alone but not once a prefix stage puts "
        "its prefix in front (the budget is 64 minus the prefix length). Alias it to a "
        "shorter wire name.",
        bad=_PIN + f"local_tools: [{_LONG}]\n" + _PREFIXED,
        good=_PIN + f"local_tools: [{_LONG[:50]}]\n" + _PREFIXED,
    ),
    CodeDoc(
        "BR308",
        "unused suppression",
        "A `suppress:` entry matches no finding in its file: the problem was fixed, or the "
        "code or `match` text is wrong. Stale suppressions would hide a later regression.",
        bad=_PIN + "names:\n  - {kind: aliases, map: {find: Glob}}\n"
        "suppress:\n  - {code: BR203, reason: find and ls both become Glob}\n",
        good=_PIN + "names:\n  - {kind: aliases, map: {find: Glob, ls: Glob}}\n"
        "suppress:\n  - {code: BR203, reason: find and ls both become Glob}\n",
        severity="warning",
    ),
)

_add(
    CodeDoc(
        "BR309",
        "prefix strip never applies",
        "An `inbound.strip_prefixes` entry is empty or has characters a tool name cannot have "
        "(allowed: a-z A-Z 0-9 _ -), so no name the API returns starts with it.",
        bad=_HEAD + "inbound:\n  strip_prefixes: [proxy.]\n",
        good=_HEAD + "inbound:\n  strip_prefixes: [proxy_]\n",
        severity="warning",
    ),
    CodeDoc(
        "BR310",
        "nothing to collapse",
        "`inbound.collapse_doubled_prefixes` is on, but the rules know no prefix (a `prefix` "
        "stage, a `passthrough` stage with a `prefix`, or `strip_prefixes`), so it does "
        "nothing.",
        bad=_HEAD + "inbound:\n  collapse_doubled_prefixes: true\n",
        good=_HEAD + "names:\n  - kind: prefix\n    value: mcp__pi__\n"
        "inbound:\n  collapse_doubled_prefixes: true\n",
        severity="warning",
    ),
    CodeDoc(
        "BR311",
        "case-insensitive match would guess",
        "`inbound.match_registered: insensitive` compares an unmapped name with the registered "
        "local names ignoring case, but two known local tools differ only in case; when both "
        "are registered, a name matching them is left unmapped rather than guessed.",
        bad=_HEAD + "local_tools: [my_tool, My_Tool]\ninbound:\n  match_registered: insensitive\n",
        good=_HEAD + "local_tools: [my_tool, other]\ninbound:\n  match_registered: insensitive\n",
        severity="warning",
    ),
    CodeDoc(
        "BR312",
        "limit above the API's",
        "`wire_names.max_length` is above 64, the longest tool name the Messages API accepts: "
        "a longer name passes the runtime check and the API refuses the request.",
        bad=_HEAD + "wire_names:\n  max_length: 100\n",
        good=_HEAD + "wire_names:\n  max_length: 64\n",
        severity="warning",
    ),
    CodeDoc(
        "BR313",
        "schema the target refuses",
        "A tool of the local pin has an input schema that an API named by `lint --target`, "
        "`schemas.lint_targets` or `schemas.target` would refuse (the message lists where and "
        "why), and the rules' `schemas:` do not convert it for that API: a request carrying "
        "it fails whole.",
        bad=_HEAD + "local_pin: pi@0.73.1\nschemas: {lint_targets: [openai-strict]}\n",
        good=_HEAD + "local_pin: pi@0.73.1\nschemas: {target: openai-strict}\n",
        severity="warning",
    ),
    CodeDoc(
        "BR314",
        "schema converted for the target",
        "A tool of the local pin has an input schema the target would refuse, and the "
        "rules' `schemas.target` converts it (the message names the operations); "
        "`explain TOOL --schema` shows the result.",
        bad=_HEAD + "local_pin: pi@0.73.1\nschemas: {target: gemini}\n",
        good=_HEAD + "local_pin: pi@0.73.1\nschemas: {target: anthropic}\n",
        severity="info",
    ),
    CodeDoc(
        "BR315",
        "canonical name, other schema",
        "A local tool goes out under the name of a pinned Claude Code tool without a "
        "binding, but its schema differs from that tool's (the message lists the fields): "
        "the model calls it with Claude Code's arguments and the agent gets the wrong ones. "
        "Bind it with the operations that map the arguments.",
        bad=_PIN + "local_pin: pi@0.73.1\nnames:\n  - {kind: aliases, map: {read: Read}}\n",
        good=_PIN + "local_pin: pi@0.73.1\nnames:\n  - {kind: aliases, map: {read: Read}}\n"
        "bindings:\n  - local: read\n    wire: Read\n    schema: canonical\n    input:\n"
        "      - rename: {file_path: path}\n",
        severity="warning",
    ),
    CodeDoc(
        "BR316",
        "name the target refuses",
        "A known local tool goes out under a wire name that an API named by `lint --target`, "
        "`schemas.lint_targets` or `schemas.target` refuses (Gemini: a letter or `_` first, "
        "then `a-zA-Z0-9_.:-`, at most 64). The `wire_names` guard refuses such a request at "
        "run time; alias the tool to a name every target accepts.",
        bad=_HEAD + "local_tools: [x]\nnames:\n  - {kind: aliases, map: {x: 9x}}\n"
        "schemas: {lint_targets: [gemini]}\n",
        good=_HEAD + "local_tools: [x]\nnames:\n  - {kind: aliases, map: {x: x9}}\n"
        "schemas: {lint_targets: [gemini]}\n",
        severity="warning",
    ),
)

_MYAGENT = (
    '{"tools": {"Read": {"input_schema": {"type": "object", '
    '"properties": {"path": {"type": "string"}}, "required": ["path"]}}}}'
)
_add(
    CodeDoc(
        "BR319",
        "Claude Code name, missing fields",
        "A tool of the local pin has the very name of a Claude Code tool but its schema "
        "lacks fields that tool requires, and no binding maps them: a model calls it with "
        "Claude Code's arguments (`Read` with `file_path`) and the agent cannot run the call. "
        "Bind it with the operations that map the arguments. Without a `pin:` the newest "
        "Claude Code pin on the search path is the reference.",
        bad="# rules.yaml\n" + _HEAD + "local_pin: myagent@1.0.0\n"
        "# .bridge-rules/pins/myagent@1.0.0.json\n" + _MYAGENT + "\n",
        good="# rules.yaml\n" + _HEAD + "local_pin: myagent@1.0.0\nbindings:\n"
        "  - local: Read\n    wire: Read\n    schema: canonical\n    input:\n"
        "      - rename: {file_path: path}\n"
        "# .bridge-rules/pins/myagent@1.0.0.json\n" + _MYAGENT + "\n",
        severity="warning",
    ),
    CodeDoc(
        "BR320",
        "forced tool for a model that refuses it",
        "A `models:` entry keeps a forced `tool_choice` (`any` or `tool`) for a model the "
        "packaged `models` profile says refuses one (Opus 5.5, Sonnet 5.5, Fable): every "
        "request that forces a tool comes back a 400 from the upstream, in the middle of a "
        "session. Send `auto` (the tool is named in the system prompt) or `refuse` it.",
        bad=_HEAD + "extends: models\nmodels:\n  claude-sonnet-5-5:\n"
        "    tool_choice: {forced: keep}\n",
        good=_HEAD + "extends: models\nmodels:\n  claude-sonnet-5-5:\n"
        "    tool_choice: {forced: refuse}\n",
        severity="warning",
    ),
    CodeDoc(
        "BR321",
        "model glob matches no known model",
        "A `models:` key matches no model the packaged `models` profile lists, so the entry "
        "decides nothing for the current models (often a typo).",
        bad=_HEAD + "models:\n  claude-sonet-5-5:\n    system_in_messages: fold\n",
        good=_HEAD + "models:\n  claude-sonnet-5-*:\n    system_in_messages: fold\n",
        severity="warning",
    ),
    CodeDoc(
        "BR322",
        "route fixes a model that refuses a forced tool",
        "A `serve --config` route's `model:` glob takes a model that the packaged `models` "
        "profile says refuses a forced `tool_choice` (Opus 5.5, Sonnet 5.5, Fable), and the "
        "route's rules send a forced one as it is: no `models:` entry decides it, or one says "
        "`keep`. Every request whose agent forces a tool (pi-flows' `finish`, a "
        "structured-output helper) then comes back a 400 from the upstream. Reported by "
        "`lint --config FILE` and when `serve` starts, at the route's `model:`. Give the "
        "route rules that extend `models`, or an entry with `forced: auto` or `refuse`.",
        bad="# serve.yaml\nupstream: http://127.0.0.1:8001\nroutes:\n  - name: flows\n"
        "    rules: [pi-flows]\n    model: claude-sonnet-5-5\n",
        good="# serve.yaml\nupstream: http://127.0.0.1:8001\nroutes:\n  - name: flows\n"
        "    rules: [pi-flows, models]\n    model: claude-sonnet-5-5\n",
        severity="warning",
    ),
)

# ------------------------------------------------ BR4xx: bindings and repair
_BIND = _PIN + "local_pin: pi@0.73.1\nbindings:\n  - local: read\n    wire: Read\n"

_add(
    CodeDoc(
        "BR317",
        "pattern matches no pinned tool",
        "A `policy` pattern (`deny`, `allow`) or a `filters.drop` name matches no tool of the "
        "pins the rules name (their local and wire names), of `local_tools` or of a binding, "
        "so it removes or allows nothing. `filters.drop` takes exact names: a glob there "
        "matches nothing; use `policy.deny`.",
        bad=_HEAD + "local_pin: pi@0.73.1\nfilters:\n  drop: [mcp__terminal__*]\n",
        good=_HEAD + "local_pin: pi@0.73.1\npolicy:\n  deny: [write]\n",
        severity="warning",
    ),
    CodeDoc(
        "BR318",
        "policy pattern is a typo of a pinned tool",
        "A `policy.deny` or `policy.allow` pattern without glob characters matches no tool of "
        "the pins the rules name, of `local_tools` or of a binding, but is the name of one in "
        "another case or one or two edits away from it (one for names of four characters or "
        "fewer). A misspelt deny denies nothing, so this is an error; the message names the "
        "tool meant.",
        bad=_HEAD + "local_pin: pi@0.73.1\npolicy:\n  deny: [bassh]\n",
        good=_HEAD + "local_pin: pi@0.73.1\npolicy:\n  deny: [bash]\n",
    ),
    CodeDoc(
        "BR401",
        "invalid field path",
        "A path in a binding operation does not parse: an empty segment in a dotted path, a "
        "JSONPath (`$...`) that jsonpath-ng rejects, or a JSONPath that does not end in one "
        "field name (operations act on that field of every match).",
        bad=_BIND + "    input:\n      - rename: {'$.edits[': path}\n",
        good=_BIND + "    input:\n      - rename: {file_path: path}\n",
    ),
    CodeDoc(
        "BR402",
        "invalid JMESPath expression",
        "The `expr` of a `jmespath` operation does not compile. It is compiled once when the "
        "rules load, so a typo is found here and never at request time.",
        bad=_BIND + "    input:\n      - jmespath: {expr: 'file_path[', into: path}\n",
        good=_BIND + "    input:\n      - jmespath: {expr: file_path, into: path}\n",
    ),
    CodeDoc(
        "BR403",
        "bound wire tool missing from the pin",
        "A `canonical` or `hybrid` binding shows the model the pinned schema of its wire tool, "
        "but the pinned Claude Code version has no such tool (e.g. `TaskOutput`, removed by "
        "2.1.300). Bind to a tool the pin has, or drop the binding so the local tool keeps "
        "its own schema under its default wire name.",
        bad=_PIN + "bindings:\n  - {local: get_subagent_result, wire: TaskOutput, "
        "schema: canonical}\n",
        good=_PIN + "bindings:\n  - {local: get_subagent_result, wire: TaskGet, "
        "schema: canonical}\n",
    ),
    CodeDoc(
        "BR404",
        "field not in the wire schema",
        "An operation reads a field that the pinned wire schema (plus the binding's extras) "
        "does not have, so the model will never send it: almost always a misspelling, so it "
        "is an error, with the nearest field the schema has.",
        bad=_BIND + "    schema: canonical\n    input:\n      - rename: {filepath: path}\n",
        good=_BIND + "    schema: canonical\n    input:\n      - rename: {file_path: path}\n",
    ),
    CodeDoc(
        "BR405",
        "field not in the local schema",
        "An operation writes a field (or a hybrid binding names an extra) that the local "
        "tool's pinned schema does not have, so the local tool would not understand it; an "
        "error, with the nearest field the schema has. A profile that reproduces a tool's "
        "legacy arguments on purpose says so under `suppress:`.",
        bad=_BIND + "    schema: canonical\n    input:\n      - rename: {file_path: file}\n",
        good=_BIND + "    schema: canonical\n    input:\n      - rename: {file_path: path}\n",
    ),
    CodeDoc(
        "BR406",
        "lossy history",
        "`history: auto` derives local -> wire from the inverse of each input operation, but "
        "one of them (prefer, coalesce, keep, jmespath, an ambiguous merge) has none. Declare "
        "the local -> wire operations under `history:`.",
        bad=_BIND + "    schema: canonical\n    input:\n      - coalesce: {into: path, "
        "from: [file_path, path]}\n",
        good=_BIND + "    schema: canonical\n    input:\n      - coalesce: {into: path, "
        "from: [file_path, path]}\n    history:\n      - rename: {path: file_path}\n",
        severity="warning",
    ),
    CodeDoc(
        "BR407",
        "missing history",
        "`history: none` replays local arguments unchanged under the wire name although the "
        "binding reshapes arguments, so replayed calls do not match the schema the model sees.",
        bad=_BIND + "    schema: canonical\n    input:\n      - rename: {file_path: path}\n"
        "    history: none\n",
        good=_BIND + "    schema: canonical\n    input:\n      - rename: {file_path: path}\n",
        severity="warning",
    ),
    CodeDoc(
        "BR408",
        "undeclared replay loss",
        "An operation can lose what history replay should give back (drop, prefer, coalesce, "
        "keep, jmespath, default, copy, values, merge or split: a field removed, added or "
        "chosen, or list items reordered), and the binding has no `losses:` naming what. "
        "Agents resend earlier calls, so an undeclared loss shows the model calls it never "
        "made; the declaration is what `explain` shows and the round-trip tests allow.",
        bad=_BIND + "    schema: canonical\n    input:\n      - rename: {file_path: path}\n"
        "      - drop: [pages]\n",
        good=_BIND + "    schema: canonical\n    input:\n      - rename: {file_path: path}\n"
        "      - drop: [pages]\n    losses:\n      - fields: [pages]\n        side: wire\n"
        "        why: pi has no page ranges\n",
        severity="warning",
    ),
    CodeDoc(
        "BR409",
        "bound twice at run time",
        "Two bindings added while the program runs (`Engine.with_bindings`, or the files of "
        "`serve --bindings-dir`) bind the same local tool. Whichever came last would win, so "
        "the rules would depend on the order the bindings arrived in; they are refused "
        "instead. A runtime binding may replace a rule file's binding of the tool.",
        bad="# a.yaml\n" + _HEAD + "bindings:\n  - {local: ask_user, wire: AskUserQuestion}\n"
        "# b.yaml\n" + _HEAD + "bindings:\n  - {local: ask_user, wire: mcp__pi__ask}\n",
        good="# a.yaml\n" + _HEAD + "bindings:\n  - {local: ask_user, wire: AskUserQuestion}\n",
    ),
    CodeDoc(
        "BR410",
        "more than bindings at run time",
        "A source of bindings added while the program runs holds something other than "
        "`bindings` (and `bridge-rules`, `name`, `description`). Stages, repairs, the gate "
        "and the rest belong in the rule files, which `serve` reads again on reload.",
        bad=_HEAD + "gate: {api: [anthropic-messages]}\nbindings:\n"
        "  - {local: ask_user, wire: AskUserQuestion}\n",
        good=_HEAD + "bindings:\n  - {local: ask_user, wire: AskUserQuestion}\n",
    ),
    CodeDoc(
        "BR411",
        "output operations never applied",
        "A binding's `output:` operations reshape results into the shape the description "
        "sent promises, so they apply only when that description is not the agent's own "
        "(the pinned wire tool's, or a text of the rules). Here the agent's description is "
        "sent, which describes the results as the agent makes them.",
        bad=_BIND + "    wire_description: local\n    output:\n      - number_lines: {}\n",
        good=_BIND + "    wire_description: Reads a file; lines come numbered as cat -n does.\n"
        "    output:\n      - number_lines: {}\n",
        severity="warning",
    ),
    CodeDoc(
        "BR412",
        "no pinned description",
        "`wire_description: pin` sends the wire tool's own description from the pin, but the "
        "pin has none for it (the packaged Claude Code pins hold schemas only), so the "
        "agent's own is sent. `pin capture` records descriptions.",
        bad=_BIND + "    schema: canonical\n    wire_description: pin\n",
        good=_BIND + "    schema: canonical\n    wire_description: auto\n",
        severity="warning",
    ),
)
