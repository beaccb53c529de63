"""A `pip install .` user gets the rules, every profile and the pinned schemas."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_wheel_ships_rules_profiles_and_schemas(tmp_path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = tmp_path.glob("bridge_rules-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {p.relative_to(ROOT).as_posix() for p in (ROOT / "rules").rglob("*.yaml")}
    shipped |= {p.relative_to(ROOT).as_posix() for p in (ROOT / "schemas").rglob("*.json")}
    assert shipped
    for rel in sorted(shipped):
        assert f"bridge_rules/_data/{rel}" in names, rel
    assert "bridge_rules/py.typed" in names
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert (
        "bridge-rules = bridge_rules.cli.app:entry"
        in zipfile.ZipFile(wheel).read(entry_points).decode()
    )
