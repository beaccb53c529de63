"""The e2e installer against a fake ``npm``: no node needed, so not marked e2e."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest
from npm_install import NpmInstallError, npm_install

# Records each run, notes when another run is still going, then installs after a pause.
FAKE_NPM = """#!/bin/sh
prefix="$3"
echo run >> "$prefix/../runs"
if [ -e "$prefix/../busy" ]; then echo overlap >> "$prefix/../runs"; fi
touch "$prefix/../busy"
sleep 0.3
mkdir -p "$prefix/node_modules/.bin" "$prefix/node_modules/pkg"
touch "$prefix/node_modules/.bin/pkg"
echo '{"version": "1.0.0"}' > "$prefix/node_modules/pkg/package.json"
rm "$prefix/../busy"
"""


@pytest.fixture
def fake_npm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npm = bin_dir / "npm"
    npm.write_text(FAKE_NPM)
    npm.chmod(npm.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return tmp_path


def test_two_workers_asking_at_once_install_once(fake_npm: Path) -> None:
    prefix = fake_npm / "cache"
    results: list[Path] = []
    threads = [
        threading.Thread(target=lambda: results.append(npm_install(prefix, "pkg", "1.0.0", "pkg")))
        for _ in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [prefix / "node_modules" / ".bin" / "pkg"] * 2
    assert (fake_npm / "runs").read_text().split() == ["run"]


def test_another_version_is_installed_over_the_cached_one(fake_npm: Path) -> None:
    prefix = fake_npm / "cache"
    npm_install(prefix, "pkg", "1.0.0", "pkg")
    npm_install(prefix, "pkg", "1.0.0", "pkg")
    npm_install(prefix, "pkg", "2.0.0", "pkg")
    assert (fake_npm / "runs").read_text().split() == ["run", "run"]


def test_a_failed_install_says_what_npm_said(fake_npm: Path) -> None:
    with pytest.raises(NpmInstallError, match=r"npm install pkg@1\.0\.0 failed"):
        npm_install(fake_npm / "cache", "pkg", "1.0.0", "a-binary-it-does-not-ship")
