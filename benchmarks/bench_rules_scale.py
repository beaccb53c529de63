"""``python benchmarks/bench_rules_scale.py``: load and lint time against the size of a rule set.

One alias table of N entries (and, in a second table, N stages of one entry each)
is loaded with ``bridge_rules.load()`` and linted with every check and the text
reporter. Each row gives seconds (best of a few runs, wall clock and CPU), the
CPU cost per entry, and two CPU-time ratios measured in the same run, so they
mean the same on any machine and on a busy one:

* ``vs floor``: against orjson parsing the same table written as JSON, the least
  any loader does with it;
* ``vs first``: the per-entry cost against the smallest size of the same kind;
  a flat column is linear time.

A third kind is a directory of N rule files of one local tool each, layered, through the
CLI as a user runs it (``explain --rules DIR t1`` and ``lint --layered DIR``); its floor is
reading every file and parsing its JSON form. A fourth, ``team files``, is the shape issue 35
measured: N files of three aliases (laid over one shared alias stage) and two bindings each,
loaded with ``bridge_rules.load(DIR)`` and linted with ``lint --layered DIR``.

``--quick`` stops at 10,000 entries; ``--kind`` runs one kind. Issue 13's targets (100,000
alias entries: load under 2 s, lint under 5 s, on the project's 2-core machine), issue 26's
(10,000 rule files load under 2 s) and issue 35's (10,000 team files: load under 2 s, lint
under 5 s) are checked against CPU time, with the wall clock beside it: on
an idle machine the two agree; on a shared one the wall clock also counts other processes'
turns.
"""

from __future__ import annotations

import argparse
import gc
import io
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import orjson

ALIAS_SIZES = (1_000, 10_000, 50_000, 100_000)
STAGE_SIZES = (100, 1_000, 5_000)
FILE_SIZES = (1_000, 10_000)
TARGETS = {  # (load, lint) seconds, and the issue that set them
    ("aliases", 100_000): (2.0, 5.0, "issue 13"),
    ("files", 10_000): (2.0, 2.0, "issue 26"),
    ("team files", 10_000): (2.0, 5.0, "issue 35"),
}


def alias_table(n: int) -> tuple[str, bytes]:
    entries = [(f"tool_{i}", f"Wire_{i}") for i in range(n)]
    lines = ["bridge-rules: 1", "names:", "  - kind: aliases", "    map:"]
    lines += [f"      {k}: {v}" for k, v in entries]
    return "\n".join(lines) + "\n", orjson.dumps({"names": [{"map": dict(entries)}]})


def stage_list(n: int) -> tuple[str, bytes]:
    stages = [{"kind": "aliases", "id": f"s{i}", "map": {f"t{i}": f"W{i}"}} for i in range(n)]
    lines = ["bridge-rules: 1", "names:"]
    lines += [f"  - {{kind: aliases, id: s{i}, map: {{t{i}: W{i}}}}}" for i in range(n)]
    return "\n".join(lines) + "\n", orjson.dumps({"names": stages})


def file_tree(n: int, root: Path) -> list[bytes]:
    """``n`` rule files of one local tool each under ``root``; their JSON forms."""
    root.mkdir()
    forms = []
    for i in range(n):
        (root / f"r{i:05}.yaml").write_text(f"bridge-rules: 1\nlocal_tools: [t{i}]\n")
        forms.append(orjson.dumps({"bridge-rules": 1, "local_tools": [f"t{i}"]}))
    return forms


TEAM_FILE = """bridge-rules: 1
names:
  - kind: aliases
    map: {{t{i}a: W{i}a, t{i}b: W{i}b, t{i}c: W{i}c}}
bindings:
  - local: t{i}a
    wire: W{i}a
    input:
      - rename: {{path: file_path}}
  - local: t{i}b
    wire: W{i}b
"""


def team_tree(n: int, root: Path) -> list[bytes]:
    """``n`` rule files of a few aliases and bindings each under ``root``; their JSON forms."""
    root.mkdir()
    forms = []
    for i in range(n):
        (root / f"r{i:05}.yaml").write_text(TEAM_FILE.format(i=i))
        aliases = {f"t{i}{s}": f"W{i}{s}" for s in "abc"}
        bindings = [
            {"local": f"t{i}a", "wire": f"W{i}a", "input": [{"rename": {"path": "file_path"}}]},
            {"local": f"t{i}b", "wire": f"W{i}b"},
        ]
        form = {"bridge-rules": 1, "names": [{"kind": "aliases", "map": aliases}]}
        forms.append(orjson.dumps({**form, "bindings": bindings}))
    return forms


def read_and_parse(root: Path, forms: list[bytes]) -> None:
    """The floor of a rule-file tree: every file read, and its JSON form parsed."""
    for path, form in zip(sorted(root.iterdir()), forms, strict=True):
        path.read_bytes()
        orjson.loads(form)


def cli_once(*argv: str) -> None:
    from contextlib import redirect_stdout

    from bridge_rules.cli.app import main

    with redirect_stdout(io.StringIO()):
        status = main(list(argv))
    if status != 0:
        raise SystemExit(f"bridge-rules {' '.join(argv)} exited {status}")


def best(fn: Callable[[], object], runs: int) -> tuple[float, float]:
    """(wall, cpu) seconds of the fastest of ``runs`` calls."""
    results = []
    for _ in range(runs):
        gc.collect()
        wall, cpu = time.perf_counter(), time.process_time()
        fn()
        results.append((time.perf_counter() - wall, time.process_time() - cpu))
    return min(results)


def lint_once(path: Path) -> None:
    from bridge_rules.lint.runner import lint
    from bridge_rules.reporters import Summary, get

    report = lint([path])
    diags = report.diagnostics
    get("text")(diags, Summary(1, len(diags), 0, 0, report.suppressed), io.StringIO())


def load_once(path: Path) -> None:
    import bridge_rules

    bridge_rules.load(path)


Job = Callable[[], object]
Case = tuple[Job, Job, Job, int]
"""A rule set of one size, ready to time: its floor, its load, its lint, and how many runs."""


def one_file(make: Callable[[int], tuple[str, bytes]]) -> Callable[[int, Path], Case]:
    """Cases for one rule file of ``n`` entries, made by ``make``; floored by orjson."""

    def prepare(n: int, tmp: Path) -> Case:
        text, as_json = make(n)
        path = tmp / f"{make.__name__}-{n}.yaml"
        path.write_text(text, encoding="utf-8")
        runs = 3 if n >= 50_000 else 5
        jobs = partial(orjson.loads, as_json), partial(load_once, path), partial(lint_once, path)
        return (*jobs, runs)

    return prepare


def many_files(n: int, tmp: Path) -> Case:
    """A tree of ``n`` rule files through the CLI; floored by reading and parsing them."""
    root = tmp / f"files-{n}"
    forms = file_tree(n, root)
    return (
        lambda: read_and_parse(root, forms),
        lambda: cli_once("explain", "--rules", str(root), "t1"),
        lambda: cli_once("lint", "--layered", str(root)),
        3,
    )


def team_files(n: int, tmp: Path) -> Case:
    """Issue 35's tree of ``n`` team files: ``load()`` and ``lint --layered`` in process."""
    root = tmp / f"team-{n}"
    forms = team_tree(n, root)
    return (
        partial(read_and_parse, root, forms),
        partial(load_once, root),
        partial(cli_once, "lint", "--layered", str(root)),
        3,
    )


KINDS: list[tuple[str, Callable[[int, Path], Case], tuple[int, ...], str]] = [
    ("aliases", one_file(alias_table), ALIAS_SIZES, "load"),
    ("stages", one_file(stage_list), STAGE_SIZES, "load"),
    ("files", many_files, FILE_SIZES, "explain"),
    ("team files", team_files, FILE_SIZES, "load"),
]
"""Each kind of rule set: how to prepare a size, the sizes, and what its load is called."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="stop at 10,000 entries")
    parser.add_argument("--kind", choices=[k[0] for k in KINDS], help="run this kind only")
    args = parser.parse_args()
    limit = 10_000 if args.quick else None
    out = sys.stdout
    out.write(
        f"{'rule set':<18}{'floor cpu':>10}{'load s':>9}{'cpu':>7}{'µs/entry':>10}"
        f"{'vs floor':>10}{'vs first':>10}{'lint s':>9}{'cpu':>7}{'vs first':>10}\n"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for kind, prepare, sizes, loading in KINDS:
            if args.kind is not None and kind != args.kind:
                continue
            first_load = first_lint = 0.0
            for n in sizes:
                if limit is not None and n > limit:
                    continue
                floor_job, load_job, lint_job, runs = prepare(n, Path(tmp))
                _, floor = best(floor_job, runs)
                floor = max(floor, 1e-9)
                load, load_cpu = best(load_job, runs)
                lint, lint_cpu = best(lint_job, runs)
                per_load, per_lint = load_cpu / n, lint_cpu / n
                first_load = first_load or per_load
                first_lint = first_lint or per_lint
                out.write(
                    f"{kind + ' ' + format(n, ','):<18}{floor:>10.3f}{load:>9.2f}{load_cpu:>7.2f}"
                    f"{per_load * 1e6:>10.1f}{load_cpu / floor:>10.0f}"
                    f"{per_load / first_load:>10.2f}"
                    f"{lint:>9.2f}{lint_cpu:>7.2f}{per_lint / first_lint:>10.2f}\n"
                )
                target = TARGETS.get((kind, n))
                if target is not None:
                    verdict = [
                        f"{what} {cpu:.2f} s CPU ({wall:.2f} s wall) "
                        f"{'<' if cpu < want else '>='} {want:g} s"
                        for what, cpu, wall, want in (
                            (loading, load_cpu, load, target[0]),
                            ("lint", lint_cpu, lint, target[1]),
                        )
                    ]
                    out.write(f"  {target[2]} target: {'; '.join(verdict)}\n")
                out.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
