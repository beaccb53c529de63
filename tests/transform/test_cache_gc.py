"""``gcpause``: reentrant, shared by threads, and never turns on a collector it did not turn off."""

from __future__ import annotations

import gc
import threading
from typing import Any

import pytest

from bridge_rules import gcpause
from bridge_rules.gcpause import (
    PAUSE_FROM,
    SERVING_THRESHOLDS,
    freeze_loaded,
    pause_enabled,
    paused,
    paused_for,
    tune_for_serving,
)


def test_nested_blocks_restore_the_collector_once() -> None:
    assert gc.isenabled()
    with paused():
        assert not gc.isenabled()
        with paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with paused(enabled=False):
        assert gc.isenabled()


def test_a_collector_the_program_disabled_stays_disabled() -> None:
    gc.disable()
    try:
        with paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_last_thread_out_turns_it_back_on() -> None:
    inside, release = threading.Barrier(3), threading.Event()
    seen: list[bool] = []

    def request() -> None:
        with paused():
            inside.wait()
            release.wait()
        seen.append(gc.isenabled())

    threads = [threading.Thread(target=request) for _ in range(2)]
    for thread in threads:
        thread.start()
    inside.wait()
    assert not gc.isenabled()
    release.set()
    for thread in threads:
        thread.join()
    assert gc.isenabled()
    assert len(seen) == 2


def test_an_exception_inside_still_restores() -> None:
    try:
        with paused():
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    assert gc.isenabled()


def test_switch_and_freeze() -> None:
    assert pause_enabled({}) is True
    assert pause_enabled({"BRIDGE_RULES_GC_PAUSE": "0"}) is False
    assert pause_enabled({"BRIDGE_RULES_GC_PAUSE": "off"}) is False
    freeze_loaded()
    assert gc.get_freeze_count() > 0
    gc.unfreeze()


def test_serving_raises_the_young_threshold_unless_switched_off() -> None:
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        tune_for_serving({"BRIDGE_RULES_GC_PAUSE": "0"})  # the switch leaves thresholds alone
        assert gc.get_threshold() == (700, 10, 10)
        tune_for_serving({})
        assert gc.get_threshold() == SERVING_THRESHOLDS == (10_000, 1, 7)
        assert gc.get_freeze_count() > 0
        gc.set_threshold(50_000, 5, 5)  # a program's own higher threshold is kept
        tune_for_serving({})
        assert gc.get_threshold() == (50_000, 5, 5)
        gc.set_threshold(0)  # and so is collection turned off
        tune_for_serving({})
        assert gc.get_threshold()[0] == 0
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()


def test_only_a_large_body_pauses_the_collector(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gcpause._State, "from_env", True)
    assert gc.isenabled()
    with paused_for(PAUSE_FROM - 1):
        assert gc.isenabled()  # a small body: too few objects for the collector to matter
    with paused_for(PAUSE_FROM):
        assert not gc.isenabled()
    assert gc.isenabled()
    monkeypatch.setattr(gcpause._State, "from_env", False)  # BRIDGE_RULES_GC_PAUSE=0
    with paused_for(PAUSE_FROM * 4):
        assert gc.isenabled()


@pytest.mark.parametrize("count", [3, 400])
def test_engine_outbound_pauses_over_a_long_history_only(
    count: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``Engine.outbound`` pauses the collector over the walk of 256 messages or more, and
    turns it back on; a short history's walk leaves it alone (a pause costs a lock)."""
    import bridge_rules
    from bridge_rules.transform.rewriter import Rewriter

    seen: list[bool] = []
    walk = Rewriter.messages

    def watched(self: Rewriter, messages: list[Any]) -> list[Any] | None:
        seen.append(gc.isenabled())
        return walk(self, messages)

    monkeypatch.setattr(Rewriter, "messages", watched)
    messages = [{"role": "user", "content": [{"type": "text", "text": "x"}]}] * count
    bridge_rules.load().outbound({"model": "claude-sonnet-4-5", "messages": messages}, env={})
    assert seen == [count < 256]
    assert gc.isenabled()
