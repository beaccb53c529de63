"""Install a pinned npm package into a cache dir once, for the end-to-end tests."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path


class NpmInstallError(RuntimeError):
    pass


def npm_install(prefix: Path, package: str, version: str, binary: str) -> Path:
    """``prefix/node_modules/.bin/<binary>``, running ``npm install package@version`` into
    ``prefix`` unless that version is already there."""
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
    prefix.mkdir(parents=True, exist_ok=True)
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
