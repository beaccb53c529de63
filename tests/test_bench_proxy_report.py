"""The proxy benchmark's verdicts: each target judged on ratios taken within a round.

Synthetic rounds only (nothing is timed here): the table the README quotes must say
``met`` exactly when the median ratio meets the target, and the control row must show
whether the machine lets even the bare forwarder scale with a second worker.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
bench_proxy = importlib.import_module("bench_proxy")  # from the repo; benchmarks are not installed

WORKLOADS = ("small JSON", "small SSE")


def _round(
    serve_req_s: float, bare_x2_req_s: float, serve_added: float, serve_cpu: float = 0.3
) -> dict[str, Any]:
    load = {
        "serve default": {"req_s": serve_req_s, "rss_mb": 80.0, "cpu_ms": serve_cpu},
        "serve default x2": {"req_s": serve_req_s * 1.7, "rss_mb": 120.0},
        "bare aiohttp": {"req_s": 1000.0, "rss_mb": 60.0, "cpu_ms": 0.2},
        "bare aiohttp x2": {"req_s": bare_x2_req_s, "rss_mb": 60.0},
    }
    cell = {
        "added_ms": {"serve default": serve_added, "bare aiohttp": 1.0},
        "c50": load,
        "c200": load,
    }
    return dict.fromkeys(WORKLOADS, cell)


def _rows(rounds: list[dict[str, Any]]) -> dict[str, tuple[str, str]]:
    return {label: (measured, status) for label, measured, status in bench_proxy.verdicts(rounds)}


def test_targets_are_judged_on_the_median_of_per_round_ratios() -> None:
    rounds = [_round(850, 1100, 1.2), _round(700, 1000, 1.4), _round(820, 1050, 1.25)]
    rows = _rows(rounds)
    assert rows["added p50 <= 1.3x bare forwarder's (small JSON)"] == (
        "1.25x [1.20x-1.40x]",
        "met",
    )
    assert rows["throughput >= 0.8x bare forwarder's (small SSE, c50)"] == (
        "0.82x [0.70x-0.85x]",
        "met",
    )
    assert rows["--workers 2 >= 1.6x one worker (small JSON, c200)"][1] == "met"
    # 120 MB for the two-worker server: the larger of the two is what is judged.
    assert rows["RSS <= 100 MB per worker at c200 (small JSON)"][1] == "MISSED"


def test_missed_targets_say_so() -> None:
    rows = _rows([_round(500, 1000, 2.0), _round(600, 1000, 1.8)])
    assert rows["added p50 <= 1.3x bare forwarder's (small SSE)"] == (
        "1.90x [1.80x-2.00x]",
        "MISSED",
    )
    assert rows["throughput >= 0.8x bare forwarder's (small JSON, c200)"][1] == "MISSED"


def test_control_row_shows_whether_the_bare_forwarder_scales() -> None:
    rows = _rows([_round(800, 1010, 1.0), _round(800, 1030, 1.0)])
    assert rows["(control) bare --workers 2 / one worker (small JSON, c50)"] == (
        "1.02x [1.01x-1.03x]",
        "info",
    )


def test_cpu_per_request_is_judged_against_the_bare_forwarders_in_each_round() -> None:
    rows = _rows([_round(800, 1000, 1.0, serve_cpu=0.26), _round(800, 1000, 1.0, serve_cpu=0.30)])
    label = "server CPU <= 1.5x bare forwarder's (small JSON, c50)"
    assert rows[label] == ("1.40x [1.30x-1.50x]", "met")
    rows = _rows([_round(800, 1000, 1.0, serve_cpu=0.38), _round(800, 1000, 1.0, serve_cpu=0.40)])
    assert rows[label] == ("1.95x [1.90x-2.00x]", "MISSED")


def test_routing_is_judged_on_cpu_per_request_against_one_route() -> None:
    rounds = []
    for routed_cpu in (1.02, 1.10, 1.04):
        r = _round(800.0, 1800.0, 1.0)
        for cell in r.values():
            load = {k: {**v, "cpu_ms": 1.0} for k, v in cell["c50"].items()}
            load["serve routed"] = {"req_s": 790.0, "rss_mb": 80.0, "cpu_ms": routed_cpu}
            cell.update(c50=load, c200=load)
        rounds.append(r)
    row = _rows(rounds)["routes + policy CPU/request <= 1.05x one route (small JSON, c50)"]
    assert row == ("1.04x [1.02x-1.10x]", "met")


def test_issue_36_cpu_rows_judge_each_workload_against_its_own_bound() -> None:
    """Small SSE at most 1.5x, 1 MB bodies at most 1.2x: the same 1.3x ratio meets one and
    misses the other, and a report without a workload has no row for it."""
    rounds = [_round(800, 1000, 1.0, serve_cpu=0.26), _round(800, 1000, 1.0, serve_cpu=0.26)]
    for r in rounds:
        r["1 MB JSON"] = r["small JSON"]
    rows = _rows(rounds)
    assert rows["server CPU <= 1.5x bare forwarder's (small SSE, c50)"] == (
        "1.30x [1.30x-1.30x]",
        "met",
    )
    assert rows["server CPU <= 1.2x bare forwarder's (1 MB JSON, c50)"] == (
        "1.30x [1.30x-1.30x]",
        "MISSED",
    )
    assert not any("1 MB JSON" in label for label in _rows([_round(800, 1000, 1.0)]))
