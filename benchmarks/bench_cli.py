"""``python benchmarks/bench_cli.py [--runs N]``: ``explain`` and ``lint`` as whole processes.

Issue 36 asks that ``bridge-rules explain read`` and ``bridge-rules lint`` over the shipped
rules start and finish in at most 0.3 s. Each command runs ``--runs`` times as its own
process, in turn with ``python -c pass`` (the floor: an interpreter that starts and exits);
wall time from just before the start to the reaping, CPU time (user + system) from the
kernel's accounting of the finished child. Medians, with min and max.

The package's bytecode is compiled first (``compileall``), as ``pip install`` leaves it: a
process started with ``PYTHONDONTWRITEBYTECODE`` on sources without a cache compiles every
module each time, ~0.1 s more, which is not what a user's installed copy pays.
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import bridge_rules

ROOT = Path(__file__).resolve().parent.parent
TARGET = 0.3
ENTRY = "from bridge_rules.cli.app import entry; entry()"  # what the console script runs
COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "explain read": [sys.executable, "-c", ENTRY, "explain", "read"],
    "lint": [sys.executable, "-c", ENTRY, "lint"],
}


def run_once(argv: list[str]) -> tuple[float, float]:
    """(wall, cpu) seconds of one run of ``argv`` as a child process."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _pid, _status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = 0
    return wall, usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/bench_cli.py", description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args(argv)
    compileall.compile_dir(str(Path(bridge_rules.__file__).parent), quiet=1)
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in COMMANDS}
    for command in COMMANDS.values():  # one warm-up each: the file cache
        run_once(command)
    for _ in range(args.runs):
        for name, command in COMMANDS.items():  # in turn, so drift touches all alike
            times[name].append(run_once(command))
    out = [f"{args.runs} runs each, medians [min-max]; 1-min load {os.getloadavg()[0]:.2f}"]
    for name, runs in times.items():
        wall, cpu = [r[0] for r in runs], [r[1] for r in runs]
        verdict = ""
        if name != "python -c pass":
            ok = statistics.median(wall) <= TARGET
            verdict = f"  <= {TARGET} s {'met' if ok else 'MISSED'}"
        out.append(
            f"  {name:15} wall {statistics.median(wall):.3f} s [{min(wall):.3f}-{max(wall):.3f}]"
            f"  cpu {statistics.median(cpu):.3f} s{verdict}"
        )
    sys.stdout.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
