"""Install a pinned npm package into the shared cache once, for the end-to-end tests.

Each package and version has its own prefix in the cache (``<cache>/<package>@<version>``),
so clones that pin different versions never install over each other. Two processes may ask
for the same one at once: two clones' test runs, or two pytest-xdist workers (the e2e tests
are grouped on one worker, but a run with another ``--dist`` mode is not). Two ``npm
install`` runs into one prefix break each other: opencode's postinstall then finds no
binary. So the check and the install hold an exclusive lock on ``<prefix>/.install.lock``.

An install that failed is not tried again in the same process: every later test that needs
the package gets the same error at once. (npm retries a registry it cannot reach for about
a minute; once per test, a run without the registry took a minute per e2e test.)
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from toolchain import ToolchainError, agent_path, venv_tool


class NpmInstallError(RuntimeError):
    pass


_FAILED: dict[Path, str] = {}
"""Prefixes whose install failed in this process, with what npm said."""


def npm_install(
    cache: Path, package: str, version: str, binary: str, npm: Path | None = None
) -> Path:
    """``<prefix>/node_modules/.bin/<binary>``, running ``npm install package@version`` into
    the package's prefix in ``cache`` unless that version is already there. ``npm`` is the
    venv's unless given."""
    prefix = cache / f"{package.replace('/', '+')}@{version}"
    failed = _FAILED.get(prefix)
    if failed is not None:
        raise NpmInstallError(f"{failed}\n(it failed earlier in this run; not tried again)")
    try:
        with _locked(prefix):
            return _install(prefix, package, version, binary, npm)
    except NpmInstallError as exc:
        _FAILED[prefix] = str(exc)
        raise


@contextmanager
def _locked(prefix: Path) -> Iterator[None]:
    prefix.mkdir(parents=True, exist_ok=True)
    with (prefix / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        yield


def _install(prefix: Path, package: str, version: str, binary: str, npm: Path | None) -> Path:
    path = prefix / "node_modules" / ".bin" / binary
    manifest = prefix / "node_modules" / package / "package.json"
    if (
        path.exists()
        and manifest.exists()
        and json.loads(manifest.read_text()).get("version") == version
    ):
        return path
    spec = f"{package}@{version}"
    try:
        command = npm or venv_tool("npm")
        path_var = agent_path()  # npm's install scripts run `node`: the venv's, like the agents
    except ToolchainError as exc:
        raise NpmInstallError(f"cannot install {spec}: {exc}") from None
    done = subprocess.run(
        [
            str(command),
            "install",
            "--prefix",
            str(prefix),
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            spec,
        ],
        env={**os.environ, "PATH": path_var},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0 or not path.exists():
        raise NpmInstallError(f"npm install {spec} failed:\n{done.stderr}{_hint(done.stderr)}")
    return path


def _hint(stderr: str) -> str:
    """The venv's npm reads no system npmrc: a proxy's certificate authority must be named."""
    if "certificate" not in stderr:
        return ""
    return (
        "\nThe venv's npm does not read the system npm's configuration: name the certificate "
        "authority in NODE_EXTRA_CA_CERTS (or npm_config_cafile)."
    )
