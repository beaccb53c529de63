"""Install a pinned npm package into a cache dir once, for the end-to-end tests.

Two pytest-xdist workers may ask for the same package at once (the e2e tests are grouped
on one worker, but a run with another ``--dist`` mode is not). Two ``npm install`` runs
into one prefix break each other: opencode's postinstall then finds no binary. So the
check and the install hold an exclusive lock on ``<prefix>/.install.lock``.
"""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class NpmInstallError(RuntimeError):
    pass


def npm_install(prefix: Path, package: str, version: str, binary: str) -> Path:
    """``prefix/node_modules/.bin/<binary>``, running ``npm install package@version`` into
    ``prefix`` unless that version is already there."""
    with _locked(prefix):
        return _install(prefix, package, version, binary)


@contextmanager
def _locked(prefix: Path) -> Iterator[None]:
    prefix.mkdir(parents=True, exist_ok=True)
    with (prefix / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        yield


def _install(prefix: Path, package: str, version: str, binary: str) -> Path:
    path = prefix / "node_modules" / ".bin" / binary
    manifest = prefix / "node_modules" / package / "package.json"
    if (
        path.exists()
        and manifest.exists()
        and json.loads(manifest.read_text()).get("version") == version
    ):
        return path
    npm = shutil.which("npm")
    if npm is None:
        raise NpmInstallError(f"npm is not on PATH; the end-to-end tests install {package} with it")
    spec = f"{package}@{version}"
    done = subprocess.run(
        [
            npm,
            "install",
            "--prefix",
            str(prefix),
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            spec,
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0 or not path.exists():
        raise NpmInstallError(f"npm install {spec} failed:\n{done.stderr}")
    return path
