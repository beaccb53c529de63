# ruff: noqa: E501 - a table of inputs reads best one input per line
"""The hostile rule-file corpus: generated, deterministic, several hundred inputs.

Each :class:`Case` is a rule file (bytes) plus the files beside it, and whether
``extends`` may leave the directory (``BRIDGE_RULES_ALLOW_OUTSIDE``). Families:
YAML constructs (tags, merge keys, anchors, nesting, documents, encodings),
numbers and keys, wrong types in every section, patterns and expressions,
``extends`` to special files and loops, scale, and byte-level mutations of the
shipped profiles (seeded, so every run tries the same inputs).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAD = "bridge-rules: 1\n"
BIND = HEAD + "bindings:\n  - local: tool\n    wire: Tool\n    input:\n      - %s\n"
STAGE = HEAD + "names:\n  - %s\n"


@dataclass(frozen=True)
class Case:
    name: str
    text: bytes
    side: dict[str, bytes] = field(default_factory=dict)
    special: str | None = None  # "fifo": rules/fifo.yaml is a FIFO
    allow_outside: bool = False


def _case(name: str, text: str | bytes, **kw: object) -> Case:
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    return Case(name, raw, **kw)  # type: ignore[arg-type]


def yaml_constructs() -> Iterator[Case]:
    tags = [
        "!!omap [{a: 1}]", "!!pairs [{a: 1}]", "!!set {a, b}", "!!binary aGk=",
        "!!python/object/apply:os.system ['id']", "!!python/name:os.system",
        "!!python/object:__main__.X {}", "!!timestamp 2001-01-01", "!!int '1'", "!!float '1'",
        "!!bool 'true'", "!!null ''", "!!str 1", "!!map {a: 1}", "!!seq [1]", "!custom x",
        "!custom {a: 1}", "!custom [1]", "! x", "!<tag:example.com,2000:x> y",
        "!!python/tuple [1, 2]", "!!python/bytes aGk=", "!!merge x", "!!value x",
    ]  # fmt: skip
    for index, tag in enumerate(tags):
        yield _case(f"tag-{index}-value", HEAD + f"name: {tag}\n")
        yield _case(f"tag-{index}-gate", HEAD + f"gate: {tag}\n")
        yield _case(f"tag-{index}-key", HEAD + f"? {tag}\n: 1\n")
    yield _case("tag-directive", "%TAG !e! tag:example.com,2000:\n---\n" + HEAD + "name: !e!x y\n")
    yield _case("yaml-1.1-directive", "%YAML 1.1\n---\n" + HEAD + "name: yes\n")
    yield _case("yaml-9-directive", "%YAML 9.9\n---\n" + HEAD)
    merges = [
        "base: &b {api: x}\ngate:\n  <<: *b\n",
        "base: &b {api: x}\ngate:\n  <<: [*b, *b]\n",
        "gate:\n  <<: {api: x}\n",
        "<<: {name: x}\n",
        "gate:\n  '<<': x\n",
        "base: &b {kind: prefix, value: x}\nnames:\n  - <<: *b\n",
    ]
    for index, text in enumerate(merges):
        yield _case(f"merge-{index}", HEAD + text)
    for depth in (10, 64, 65, 200, 1000, 10_000, 100_000):
        yield _case(f"nest-flow-seq-{depth}", HEAD + "name: " + "[" * depth + "]" * depth + "\n")
        yield _case(f"nest-flow-map-{depth}", HEAD + "name: " + "{a: " * depth + "1" + "}" * depth)
        block = "".join("  " * i + "a:\n" for i in range(min(depth, 3000)))
        yield _case(f"nest-block-{depth}", HEAD + "x:\n" + block)
        yield _case(f"unclosed-{depth}", HEAD + "name: " + "[" * depth + "\n")
    for level in (3, 6, 12):
        lines = [HEAD.rstrip(), "a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
        for i in range(1, level):
            lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
        yield _case(f"alias-bomb-{level}", "\n".join(lines) + "\n")
        yield _case(f"alias-bomb-key-{level}", "\n".join(lines) + f"\n? *a{level - 1}\n: 1\n")
    yield _case("alias-undefined", HEAD + "name: *nothing\n")
    yield _case("alias-self", HEAD + "a: &a [*a]\n")
    yield _case("alias-recursive-map", HEAD + "a: &a {b: *a}\n")
    yield _case("anchor-reuse", HEAD + "a: &x 1\nb: &x 2\nname: *x\n")
    yield _case("alias-as-key", HEAD + "k: &k name\n? *k\n: x\n")
    yield _case("alias-map-key", HEAD + "k: &k {a: 1}\n? *k\n: x\n")
    yield _case("two-docs", HEAD + "---\n" + HEAD)
    yield _case("doc-end-then-doc", HEAD + "...\n---\nname: x\n")
    yield _case("many-docs", ("---\n" + HEAD) * 500)
    yield _case("only-comments", "# nothing\n# here\n")
    yield _case("empty", b"")
    yield _case("only-dashes", "---\n")
    yield _case("null-doc", "~\n")
    yield _case("scalar-doc", "hello\n")
    yield _case("list-doc", "- a\n- b\n")
    yield _case("bom", "\ufeff" + HEAD)
    yield _case("double-bom", "\ufeff\ufeff" + HEAD)
    yield _case("utf16", HEAD.encode("utf-16"))
    yield _case("utf32", HEAD.encode("utf-32"))
    yield _case("latin1", HEAD.encode() + b"name: caf\xe9\n")
    yield _case("nul-byte", HEAD.encode() + b"name: a\x00b\n")
    yield _case("nul-only", b"\x00" * 100)
    yield _case("binary-junk", bytes(range(256)) * 4)
    yield _case("overlong-utf8", HEAD.encode() + b"name: \xc0\xaf\n")
    yield _case("encoded-surrogate", HEAD.encode() + b"name: \xed\xa0\x80\n")
    yield _case("crlf", HEAD.replace("\n", "\r\n") + "name: x\r\n")
    yield _case("cr-only", "bridge-rules: 1\rname: x\r")
    yield _case("tabs-indent", HEAD + "gate:\n\tapi: x\n")
    yield _case("long-line", HEAD + "name: " + "x" * 1_000_000 + "\n")
    yield _case("long-key", HEAD + "k" * 100_000 + ": 1\n")
    yield _case("long-plain-key-flow", HEAD + "x: {" + "k" * 2000 + ": 1}\n")
    yield _case("over-size", HEAD + "# " + "x" * (4 * 1024 * 1024) + "\n")
    yield _case("dup-top", HEAD + "name: a\nname: b\n")
    yield _case("dup-nested", HEAD + "gate:\n  api: a\n  api: b\n")
    yield _case("dup-flow", HEAD + "gate: {api: a, api: b}\n")
    yield _case("dup-many", HEAD + "".join(f"k{i % 7}: {i}\n" for i in range(100)))
    yield _case("bad-indent", HEAD + "gate:\n  api: x\n model: y\n")
    yield _case("unterminated-quote", HEAD + 'name: "abc\n')
    yield _case("unterminated-single", HEAD + "name: 'abc\n")
    yield _case("block-scalar", HEAD + "description: |\n  a\n  b\n")
    yield _case("folded-scalar", HEAD + "description: >-\n  a\n  b\n")
    yield _case("bad-block-indicator", HEAD + "description: |9\n a\n")


def escapes() -> Iterator[Case]:
    nasty = ["\\ud800", "\\udfff", "\\ud800\\udc00", "\\U0010ffff", "\\U00110000", "\\x00",
             "\\x1b[31m", "\\n", "\\r", "\\u2028", "\\u202e", "\\e]0;title\\a", "\\t", "\\0"]  # fmt: skip
    for index, esc in enumerate(nasty):
        yield _case(f"escape-{index}-value", HEAD + f'name: "a{esc}b"\n')
        yield _case(f"escape-{index}-key", HEAD + f'"a{esc}b": 1\n')
        yield _case(f"escape-{index}-tool", HEAD + f'local_tools: ["a{esc}b"]\n')
        yield _case(
            f"escape-{index}-alias", STAGE % f'{{kind: aliases, map: {{"a{esc}": "B{esc}"}}}}'
        )
        yield _case(f"escape-{index}-pattern", STAGE % f'{{kind: passthrough, pattern: "a{esc}"}}')
        yield _case(f"escape-{index}-extends", HEAD + f'extends: "./a{esc}.yaml"\n')
        yield _case(
            f"escape-{index}-explained", STAGE % f'{{kind: aliases, map: {{"read": "R{esc}"}}}}'
        )


def numbers_and_keys() -> Iterator[Case]:
    values = [".inf", "-.inf", ".nan", ".NaN", "1e400", "-1e400", "1e-400", "9" * 20, "9" * 400,
              "9" * 5000, "9" * 100_000, "-" + "9" * 5000, "0x" + "f" * 5000, "0o" + "7" * 5000,
              "1_000_000", "0x1F", "1.5e308", "4.9e-324", "-0", "-0.0", "1" + "0" * 308 + ".0"]  # fmt: skip
    for index, value in enumerate(values):
        yield _case(f"number-{index}-version", f"bridge-rules: {value}\n")
        yield _case(f"number-{index}-name", HEAD + f"name: {value}\n")
        yield _case(f"number-{index}-scale", BIND % f"scale: {{t: {value}}}")
        yield _case(f"number-{index}-default", BIND % f"default: {{t: {value}}}")
        yield _case(f"number-{index}-key", HEAD + f"{value}: 1\n")
    for version in ["true", "false", "1.0", "'1'", "2", "0", "-1", "null", "[1]", "{a: 1}", ""]:
        yield _case(f"version-{version}", f"bridge-rules: {version}\n")
    yield _case("no-version", "name: x\n")
    keys = ["1", "1.5", "true", "null", "~", "2001-01-01", "[a, b]", "{a: 1}", "[[[]]]", "''"]
    for index, key in enumerate(keys):
        yield _case(f"key-{index}-top", HEAD + f"? {key}\n: 1\n")
        yield _case(f"key-{index}-map", STAGE % f"{{kind: aliases, map: {{{key}: X}}}}")
        yield _case(f"key-{index}-gate", HEAD + f"gate:\n  ? {key}\n  : 1\n")


SECTIONS = ["name", "description", "extends", "pin", "local_pin", "local_tools", "gate",
            "names", "inbound", "bindings", "repair", "text", "filters", "suppress"]  # fmt: skip
WRONG = ["null", "1", "1.5", "true", "''", "x", "[]", "{}", "[[]]", "[{}]", "[null]",
         "{a: {b: {c: 1}}}", "'" + "y" * 5000 + "'"]  # fmt: skip


def wrong_types() -> Iterator[Case]:
    for section in SECTIONS:
        for index, value in enumerate(WRONG):
            yield _case(f"wrong-{section}-{index}", HEAD + f"{section}: {value}\n")
    fields = {
        "gate": ["api", "model", "env"],
        "inbound": ["case", "strip_suffixes"],
        "text": ["system", "recover_tool_calls"],
        "filters": ["drop", "dedup_bridged", "capabilities", "deny"],
    }
    for section, names in fields.items():
        for name in names:
            for index, value in enumerate(WRONG[:8]):
                yield _case(
                    f"field-{section}-{name}-{index}", HEAD + f"{section}: {{{name}: {value}}}\n"
                )
    for kind in [
        "canonical",
        "passthrough",
        "aliases",
        "capitalize",
        "prefix",
        "bindings",
        "nope",
        "",
    ]:
        for index, extra in enumerate(["", "map: 1", "names: x", "value: [1]", "case: weird",
                                       "reverse: x", "enabled: 'no'", "id: [1]", "unknown: 1"]):  # fmt: skip
            body = f"{{kind: {kind!r}" + (f", {extra}" if extra else "") + "}"
            yield _case(f"stage-{kind or 'empty'}-{index}", STAGE % body)


def expressions() -> Iterator[Case]:
    patterns = ["(a+)+$", "(a|a)*$", "(?:a*)*b", "(a*)*$", "a{1000}{1000}", "[", "(", "\\",
                "(?P<x>a)(?P=x)", "(?<=a)b", "a" * 100_000, "(" * 5000 + ")" * 5000,
                "\\p{Greek}", "(?i)(?s).*", "[\\x00-\\x{10FFFF}]*", "x{2,1}"]  # fmt: skip
    for index, pattern in enumerate(patterns):
        quoted = "'" + pattern.replace("'", "''") + "'"
        yield _case(f"pattern-{index}-stage", STAGE % f"{{kind: passthrough, pattern: {quoted}}}")
        yield _case(f"pattern-{index}-gate", HEAD + f"gate: {{model: {quoted}}}\n")
        yield _case(
            f"pattern-{index}-text",
            HEAD + f"text: {{system: [{{find: {quoted}, replace: x, regex: true}}]}}\n",
        )
    jmes = ["a", "a[", "[" * 40 + "a" + "]" * 40, "not_null(" * 3000 + "a" + ")" * 3000,
            "a" * 2000, "a.b.c" * 150, "`{}`", "@", "a | b | c", "&a", "sort_by(@, &a)",
            "a[?b == `1`]", "\\u0000", "'" + "x" * 900]  # fmt: skip
    for index, expr in enumerate(jmes):
        quoted = "'" + expr.replace("'", "''") + "'"
        yield _case(f"jmespath-{index}", BIND % f"jmespath: {{expr: {quoted}, into: out}}")
    paths = ["$.a", "$..a", "$[*].a", "$" + "[0]" * 400 + ".a", "$" + "[" * 40 + "0" + "]" * 40 + ".a",
             "$.a[?(@.b > 1)].c", "$.", "$[", "a..b", ".a", "a.", "", "$" + ".a" * 600]  # fmt: skip
    for index, path in enumerate(paths):
        quoted = "'" + path.replace("'", "''") + "'"
        yield _case(f"jsonpath-{index}-rename", BIND % f"rename: {{{quoted}: b}}")
        yield _case(f"jsonpath-{index}-drop", BIND % f"drop: [{quoted}]")
    ops = ["rename: {a: a}", "rename: {a: b, b: a}", "wrap: {into: x}", "unwrap: x",
           "merge: {}", "split: {}", "coerce: {a: number}", "coerce: {a: nope}", "scale: {a: 0}",
           "scale: {a: 1e-300}", "default: {a: {b: [1, 2]}}", "drop: {a: 1}", "keep: []",
           "keep: [a]", "nope: 1", "{}", "[]"]  # fmt: skip
    for index, op in enumerate(ops):
        yield _case(f"op-{index}", BIND % op)


def extends_cases() -> Iterator[Case]:
    for target in ["/dev/zero", "/dev/urandom", "/dev/null", "/dev/stdin", "/proc/self/mem",
                   "/proc/self/status", "/etc/passwd", "/etc/shadow", "/"]:  # fmt: skip
        yield _case(f"extends-{target}", HEAD + f"extends: {target}\n")
        yield _case(f"extends-{target}-allowed", HEAD + f"extends: {target}\n", allow_outside=True)
    yield _case("extends-fifo", HEAD + "extends: ./fifo.yaml\n", special="fifo")
    yield _case("extends-self", HEAD + "extends: ./rules.yaml\n")
    yield _case("extends-dir", HEAD + "extends: ./\n")
    yield _case("extends-parent", HEAD + "extends: ../x.yaml\n")
    yield _case("extends-parent-allowed", HEAD + "extends: ../x.yaml\n", allow_outside=True)
    yield _case("extends-missing", HEAD + "extends: ./missing.yaml\n")
    yield _case("extends-unknown-profile", HEAD + "extends: no-such-profile\n")
    yield _case("extends-list-mixed", HEAD + "extends: [default, ./b.yaml, 1, null]\n")
    yield _case(
        "extends-binary", HEAD + "extends: ./bin.yaml\n", side={"bin.yaml": bytes(range(256))}
    )
    yield _case(
        "extends-cycle",
        HEAD + "extends: ./b.yaml\n",
        side={"b.yaml": (HEAD + "extends: ./rules.yaml\n").encode()},
    )
    chain = {f"c{i}.yaml": (HEAD + f"extends: ./c{i + 1}.yaml\n").encode() for i in range(300)}
    chain["c300.yaml"] = HEAD.encode()
    yield _case("extends-chain-300", HEAD + "extends: ./c0.yaml\n", side=chain)
    many = {f"m{i}.yaml": HEAD.encode() for i in range(200)}
    yield _case(
        "extends-200",
        HEAD + "extends: [" + ", ".join(f"./m{i}.yaml" for i in range(200)) + "]\n",
        side=many,
    )
    yield _case(
        "extends-each-profile",
        HEAD + "extends: [default, pi-flows, pi-tool-guard, opencode, pi-claude-cli]\n",
    )


def scale_cases() -> Iterator[Case]:
    for n in (1000, 5000):
        table = "".join(f"      tool_{i}: Wire_{i}\n" for i in range(n))
        yield _case(f"aliases-{n}", HEAD + "names:\n  - kind: aliases\n    map:\n" + table)
        inverse = "".join(f"      Wire_{i}: tool_{i}\n" for i in range(n))
        yield _case(
            f"aliases-inverse-{n}",
            HEAD
            + "names:\n  - kind: aliases\n    reverse: always\n    map:\n"
            + table
            + "    inverse:\n"
            + inverse,
        )
    stages = "".join(f"  - {{kind: aliases, id: s{i}, map: {{t{i}: W{i}}}}}\n" for i in range(1000))
    yield _case("stages-1000", HEAD + "names:\n" + stages)
    same = "".join(f"  - {{kind: aliases, id: s{i}, map: {{t: W{i}}}}}\n" for i in range(1000))
    yield _case("stages-1000-shadowing", HEAD + "names:\n" + same)
    tools = "".join(f"  - t{i}\n" for i in range(5000))
    yield _case("local-tools-5000", HEAD + "local_tools:\n" + tools)
    binds = "".join(
        f"  - {{local: l{i}, wire: W{i}, input: [rename: {{a: b}}]}}\n" for i in range(500)
    )
    yield _case("bindings-500", HEAD + "bindings:\n" + binds)
    sup = "".join(f"  - {{code: BR{300 + i % 9}, reason: x}}\n" for i in range(500))
    yield _case("suppress-500", HEAD + "suppress:\n" + sup)


def mutations(count: int = 80, seed: int = 13) -> Iterator[Case]:
    """Byte flips, deletions, duplications and truncations of the shipped rule files."""
    rng = random.Random(seed)
    sources = sorted((ROOT / "rules").rglob("*.yaml"))
    originals = [p.read_bytes() for p in sources]
    for index in range(count):
        source = rng.randrange(len(originals))
        data = bytearray(originals[source])
        for _ in range(rng.randint(1, 6)):
            if not data:
                break
            at = rng.randrange(len(data))
            action = rng.randrange(5)
            if action == 0:
                data[at] = rng.randrange(256)
            elif action == 1:
                del data[at : at + rng.randint(1, 40)]
            elif action == 2:
                end = min(len(data), at + rng.randint(1, 200))
                data[at:at] = data[at:end]
            elif action == 3:
                data[at:at] = rng.choice(
                    [
                        b"&a ",
                        b"*a",
                        b"<<: ",
                        b"!!omap ",
                        b"\t",
                        b"\n- ",
                        b": ",
                        b"{",
                        b"[",
                        b"'",
                        b'"\\ud800"',
                    ]
                )
            else:
                del data[at:]
        yield _case(f"mutant-{index}-{sources[source].stem}", bytes(data))


def all_cases() -> list[Case]:
    cases = [*yaml_constructs(), *escapes(), *numbers_and_keys(), *wrong_types(),
             *expressions(), *extends_cases(), *scale_cases(), *mutations()]  # fmt: skip
    names = [c.name for c in cases]
    assert len(names) == len(set(names)), "corpus case names must be unique"
    return cases
