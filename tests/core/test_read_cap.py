"""The 4 MiB cap on a rule file, at its edges: what the loader reads is what
``Path.read_bytes`` reads, byte for byte, up to the cap; one byte past it is BR010. It reads
in pieces sized by ``stat`` (one read of the whole cap allocated 4 MiB a file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge_rules.loader import MAX_FILE_BYTES, read_bytes


@pytest.mark.parametrize(
    "size",
    [0, 1, 65_535, 65_537, MAX_FILE_BYTES - 1, MAX_FILE_BYTES, MAX_FILE_BYTES + 1, 9_000_000],
)
def test_the_cap_and_the_bytes(tmp_path: Path, size: int) -> None:
    path = tmp_path / "r.yaml"
    path.write_bytes(bytes(i % 251 for i in range(size)))
    raw, diags = read_bytes(path, "r.yaml")
    if size > MAX_FILE_BYTES:
        assert raw is None
        assert [d.code for d in diags] == ["BR010"]
    else:
        assert diags == []
        assert raw == path.read_bytes()
