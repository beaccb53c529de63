"""Installed footprint and start-up time of bridge-rules, before and after a dependency change.

    python benchmarks/bench_footprint.py [--runs N] [--before-spec 'typer>=0.12']

Builds two throw-away virtual environments in one run and measures both the same way:

- ``after``: ``pip install .`` (this checkout, as a user gets it);
- ``before``: the same, then typer-slim swapped for ``--before-spec`` (default: the full
  ``typer``, with rich and pygments, which the project depended on until issue 14).

For each: the size of site-packages, the size of rich + pygments inside it, and the best and
median wall time of ``python -c 'import bridge_rules'``, ``bridge-rules --help`` and
``python -c pass`` (the floor: an interpreter that starts and exits). Needs pip and access
to the package index; it writes only under a temporary directory.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("rich", "pygments", "markdown_it", "mdurl", "shellingham")


def _pip(env: Path, *args: str) -> None:
    subprocess.run(
        [str(env / "bin" / "python"), "-m", "pip", "-q", "--disable-pip-version-check", *args],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _site_packages(env: Path) -> Path:
    return next((env / "lib").glob("python3*/site-packages"))


def _size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def _run_ms(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - start) * 1000


def _commands(env: Path) -> dict[str, list[str]]:
    python = str(env / "bin" / "python")
    return {
        "python -c pass": [python, "-c", "pass"],
        "import bridge_rules": [python, "-c", "import bridge_rules"],
        "bridge-rules --help": [str(env / "bin" / "bridge-rules"), "--help"],
    }


def _build(where: Path, before_spec: str | None) -> Path:
    venv.create(where, with_pip=True)
    _pip(where, "install", str(ROOT))
    if before_spec is not None:
        _pip(where, "uninstall", "-y", "typer-slim")
        _pip(where, "install", before_spec)
    return where


def _sizes(env: Path) -> dict[str, float]:
    site = _site_packages(env)
    heavy = sum(_size(site / name) for name in HEAVY if (site / name).is_dir())
    return {"site-packages MB": _size(site) / 1e6, "rich, pygments & co MB": heavy / 1e6}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--before-spec", default="typer>=0.12")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="br-footprint-") as tmp:
        envs = {
            "before": _build(Path(tmp) / "before", opts.before_spec),
            "after": _build(Path(tmp) / "after", None),
        }
        sizes = {name: _sizes(env) for name, env in envs.items()}
        samples: dict[str, dict[str, list[float]]] = {name: {} for name in envs}
        for _ in range(opts.runs):  # alternate, so that a busy machine slows both alike
            for name, env in envs.items():
                for label, command in _commands(env).items():
                    samples[name].setdefault(label, []).append(_run_ms(command))
    sys.stdout.write(f"{'':26}{'before':>22}{'after':>22}\n")
    for label in sizes["after"]:
        row = "".join(f"{sizes[name][label]:>22.1f}" for name in envs)
        sys.stdout.write(f"{label:26}{row}\n")
    for label in samples["after"]:
        row = "".join(
            f"{min(samples[n][label]):>9.1f} / {statistics.median(samples[n][label]):6.1f} ms"
            for n in envs
        )
        sys.stdout.write(f"{label:26}{row}\n")
    sys.stdout.write(f"(times: best / median of {opts.runs} alternating runs)\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
