"""A directory laid out as the kubelet lays out a ConfigMap volume (its ``AtomicWriter``).

Each key is a symbolic link ``KEY -> ..data/KEY``; ``..data`` links to a hidden timestamped
directory holding the files. An update writes a new timestamped directory, points
``..data_tmp`` at it, renames that link over ``..data`` and removes the old directory.
"""

from __future__ import annotations

import os
import shutil
from itertools import count
from pathlib import Path

_STAMPS = count(1)


def _write_payload(root: Path, files: dict[str, str]) -> str:
    stamp = f"..2026_11_28_10_00_00.{next(_STAMPS):09d}"
    payload = root / stamp
    payload.mkdir()
    for key, text in files.items():
        (payload / key).write_text(text, encoding="utf-8")
        (payload / key).chmod(0o444)
    payload.chmod(0o555)
    return stamp


def mount(root: Path, files: dict[str, str]) -> Path:
    """Lay ``files`` out under ``root`` as a fresh ConfigMap volume; returns ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    os.symlink(_write_payload(root, files), root / "..data")
    for key in files:
        os.symlink(f"..data/{key}", root / key)
    root.chmod(0o555)
    return root


def swap(root: Path, files: dict[str, str]) -> None:
    """The kubelet's update: new payload, ``..data_tmp``, rename over ``..data``, remove old."""
    root.chmod(0o755)
    old = os.readlink(root / "..data")
    os.symlink(_write_payload(root, files), root / "..data_tmp")
    os.rename(root / "..data_tmp", root / "..data")
    (root / old).chmod(0o755)
    shutil.rmtree(root / old)
    for key in files:
        if not (root / key).is_symlink():
            os.symlink(f"..data/{key}", root / key)
    root.chmod(0o555)
