"""The fingerprint ``--watch`` polls changes on each kubelet update, and only then."""

from __future__ import annotations

from pathlib import Path

from tests.deploy import kubelet

from bridge_rules.proxy.watch import fingerprint


def test_each_swap_changes_it_and_nothing_else_does(tmp_path: Path) -> None:
    rules = kubelet.mount(tmp_path / "rules", {"a.yaml": "x: 1\n", "b.yaml": "y: 2\n"})
    paths = [str(rules), "default"]  # a profile name is not a path: skipped
    first = fingerprint(paths)
    assert len(first) == 2  # the two keys; not ..data nor the timestamped directory
    assert fingerprint(paths) == first
    (tmp_path / "elsewhere.yaml").write_text("z: 3\n", encoding="utf-8")
    assert fingerprint(paths) == first
    seen = {first}
    for n in range(3):  # same contents each time: the swap itself is the change
        kubelet.swap(rules, {"a.yaml": "x: 1\n", "b.yaml": "y: 2\n"})
        now = fingerprint(paths)
        assert now not in seen, n
        seen.add(now)
    single = rules / "a.yaml"
    assert fingerprint([str(single)]) != fingerprint([str(rules / "b.yaml")])
