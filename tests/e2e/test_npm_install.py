"""The e2e installer and its cache, against a fake ``npm``: no registry needed, so not
marked e2e."""

from __future__ import annotations

import stat
import threading
from pathlib import Path

import pytest
from npm_install import NpmInstallError, npm_install
from toolchain import CACHE_ENV, cache_dir

# Records each run, notes when another run is still going, then installs after a pause.
FAKE_NPM = """#!/bin/sh
prefix="$3"
echo "run $(basename "$prefix")" >> "$prefix/../runs"
if [ -e "$prefix/../busy" ]; then echo overlap >> "$prefix/../runs"; fi
touch "$prefix/../busy"
sleep 0.3
mkdir -p "$prefix/node_modules/.bin" "$prefix/node_modules/pkg"
touch "$prefix/node_modules/.bin/pkg"
echo "{\\"version\\": \\"${7##*@}\\"}" > "$prefix/node_modules/pkg/package.json"
rm "$prefix/../busy"
"""


def script(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def fake_npm(tmp_path: Path) -> Path:
    return script(tmp_path / "npm", FAKE_NPM)


def runs(cache: Path) -> list[str]:
    return (cache / "runs").read_text().splitlines()


def test_two_workers_asking_at_once_install_once(tmp_path: Path, fake_npm: Path) -> None:
    cache = tmp_path / "cache"
    results: list[Path] = []
    threads = [
        threading.Thread(
            target=lambda: results.append(npm_install(cache, "pkg", "1.0.0", "pkg", fake_npm))
        )
        for _ in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [cache / "pkg@1.0.0" / "node_modules" / ".bin" / "pkg"] * 2
    assert runs(cache) == ["run pkg@1.0.0"]


def test_each_version_has_its_own_prefix_installed_once(tmp_path: Path, fake_npm: Path) -> None:
    cache = tmp_path / "cache"
    first = npm_install(cache, "pkg", "1.0.0", "pkg", fake_npm)
    assert npm_install(cache, "pkg", "1.0.0", "pkg", fake_npm) == first
    second = npm_install(cache, "pkg", "2.0.0", "pkg", fake_npm)
    assert second != first
    assert first.exists()  # a clone pinning 1.0.0 still finds its install
    assert runs(cache) == ["run pkg@1.0.0", "run pkg@2.0.0"]


def test_a_scoped_package_gets_one_directory(tmp_path: Path, fake_npm: Path) -> None:
    cache = tmp_path / "cache"
    binary = npm_install(cache, "@scope/pkg", "1.0.0", "pkg", fake_npm)
    assert binary == cache / "@scope+pkg@1.0.0" / "node_modules" / ".bin" / "pkg"


def test_an_install_that_broke_off_is_redone(tmp_path: Path, fake_npm: Path) -> None:
    cache = tmp_path / "cache"
    binary = cache / "pkg@1.0.0" / "node_modules" / ".bin" / "pkg"
    binary.parent.mkdir(parents=True)
    binary.touch()  # no package.json: npm stopped half-way
    assert npm_install(cache, "pkg", "1.0.0", "pkg", fake_npm) == binary
    assert runs(cache) == ["run pkg@1.0.0"]


def test_a_failed_install_says_what_npm_said(tmp_path: Path, fake_npm: Path) -> None:
    with pytest.raises(NpmInstallError, match=r"npm install pkg@1\.0\.0 failed"):
        npm_install(tmp_path / "cache", "pkg", "1.0.0", "a-binary-it-does-not-ship", fake_npm)


def test_a_proxys_certificate_authority_is_named_in_the_error(tmp_path: Path) -> None:
    npm = script(
        tmp_path / "npm",
        "#!/bin/sh\necho 'npm error reason: self-signed certificate in certificate chain' >&2\n"
        "exit 1\n",
    )
    with pytest.raises(NpmInstallError, match=r"(?s)self-signed certificate.*NODE_EXTRA_CA_CERTS"):
        npm_install(tmp_path / "cache", "pkg", "1.0.0", "pkg", npm)


def test_a_failed_install_is_not_tried_again_in_the_same_run(tmp_path: Path) -> None:
    tries = tmp_path / "tries"
    npm = script(
        tmp_path / "npm",
        f"#!/bin/sh\necho try >> {tries}\necho 'npm error code ECONNREFUSED' >&2\nexit 1\n",
    )
    for _ in range(3):
        with pytest.raises(NpmInstallError, match="ECONNREFUSED"):
            npm_install(tmp_path / "cache", "pkg", "1.0.0", "pkg", npm)
    assert tries.read_text().splitlines() == ["try"]
    with pytest.raises(NpmInstallError, match="not tried again"):
        npm_install(tmp_path / "cache", "pkg", "1.0.0", "pkg", npm)
    working = script(tmp_path / "ok", FAKE_NPM)
    other = npm_install(tmp_path / "cache", "pkg", "2.0.0", "pkg", working)
    assert other.exists()  # another version is its own install


def test_the_cache_is_outside_the_clone_and_can_be_moved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(CACHE_ENV, raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "bridge-rules" / "e2e"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "bridge-rules" / "e2e"
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "mine"))
    assert cache_dir() == tmp_path / "mine"
