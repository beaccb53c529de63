"""The message cache and the GC pause, for ``bench_outbound.py --replay`` / ``--gc``.

Every figure is a ratio to the orjson loads+dumps floor of the same bodies,
measured in the same run with the collector on (the floor a plain proxy pays).
"""

from __future__ import annotations

import gc
import itertools
import time
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

import orjson

from bridge_rules import Engine, load
from bridge_rules.gcpause import freeze_loaded, paused
from bridge_rules.msgcache import DEFAULT_MIN_BODY
from bridge_rules.transform import rewrite_outbound_bytes

Write = Callable[[str], object]
REPLAY_TARGET = 0.8


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _best(
    fn: Callable[[], object], repeat: int, before: Callable[[], object] | None = None
) -> float:
    best = float("inf")
    for _ in range(repeat):
        if before is not None:
            before()
        best = min(best, _timed(fn))
    return best


def pi_turns(payload: dict[str, Any]) -> Iterator[bytes]:
    """The conversation as pi sends it: each request the previous one plus 2 messages.

    Key order as pi writes it, and ``cache_control`` on the newest message only,
    so the previous request's last message comes back changed every time.
    """
    messages = payload["messages"]
    rest = {k: v for k, v in payload.items() if k not in ("model", "messages")}
    for end in range(1, len(messages) + 1, 2):
        last = messages[end - 1]
        blocks = list(last["content"])
        blocks[-1] = {**blocks[-1], "cache_control": {"type": "ephemeral"}}
        turn = [*messages[: end - 1], {**last, "content": blocks}]
        yield orjson.dumps({"model": payload["model"], "messages": turn, **rest})


def _floor(raw: bytes) -> bytes:
    return orjson.dumps(orjson.loads(raw))


def _plain(engine: Engine, raw: bytes) -> bytes:
    """Today's path: parse, rewrite, serialise, collector on."""
    return orjson.dumps(engine.outbound(orjson.loads(raw), env={}).payload)


def replay(
    label: str, payload: dict[str, Any], rounds: int, write: Write
) -> tuple[float, float, float]:
    """Summed time over every request of the conversation, best per request over ``rounds``.

    Each round starts from empty caches. Returns (cached, cached without the GC
    pause, plain) as ratios to the summed floor.
    """
    with_pause, without_pause = load(), load()
    bodies = sum(1 for _ in pi_turns(payload))
    best = [[float("inf")] * bodies for _ in range(5)]
    env: dict[str, str] = {}
    for _ in range(rounds):
        with_pause.runtime.message_cache.clear()
        without_pause.runtime.message_cache.clear()
        for i, raw in enumerate(pi_turns(payload)):
            runs = (
                partial(_floor, raw),
                partial(rewrite_outbound_bytes, with_pause.runtime, raw, env=env),
                partial(
                    rewrite_outbound_bytes, without_pause.runtime, raw, env=env, gc_pause=False
                ),
            )
            for k in range(len(runs)):  # rotated, so no variant always follows another
                which = (i + k) % len(runs)
                best[which][i] = min(best[which][i], _timed(runs[which]))
        # Today's path on its own pass (with its own floor): its full parse of every
        # request leaves the collector work that would otherwise land in the others.
        for i, raw in enumerate(pi_turns(payload)):
            best[3][i] = min(best[3][i], _timed(partial(_floor, raw)))
            best[4][i] = min(best[4][i], _timed(partial(_plain, with_pause, raw)))
    floor, cached, cached_gc, floor_today, today = (sum(column) for column in best)
    plain = today / floor_today * floor
    ratio = cached / floor
    verdict = "ok" if ratio <= REPLAY_TARGET else "MISSED"
    write(
        f"  {label:<7} {bodies:>5} requests, last {len(raw) / 1e6:5.2f} MB: floor "
        f"{floor * 1e3:8.1f}ms  cached {cached * 1e3:8.1f}ms = {ratio:.2f}x <= {REPLAY_TARGET}x "
        f"{verdict:<6} (collector on: {cached_gc / floor:.2f}x; today's path: "
        f"{plain / floor:.2f}x)\n"
    )
    return ratio, cached_gc / floor, plain / floor


def cold(label: str, raw: bytes, repeat: int, write: Write) -> tuple[float, float]:
    """One request into an empty cache against today's path; (cold, today) as floor ratios."""
    engine = load()
    store = engine.runtime.message_cache
    floor = today = first = float("inf")
    for _ in range(repeat):
        floor = min(floor, _best(lambda: orjson.dumps(orjson.loads(raw)), 1))
        today = min(today, _best(lambda: _plain(engine, raw), 1))
        first = min(first, _best(lambda: engine.outbound_bytes(raw, env={}), 1, store.clear))
    verdict = "ok" if first <= today else f"MISSED by {(first - today) * 1e6:.1f}us"
    write(
        f"  {label:<14} {len(raw):>10} floor {floor * 1e3:8.2f}ms  today {today / floor:5.2f}x  "
        f"cold, cache on {first / floor:5.2f}x  <= today: {verdict}\n"
    )
    return first / floor, today / floor


def gc_effect(label: str, raw: bytes, repeat: int, write: Write) -> None:
    """Today's path with the collector on, paused, and paused after ``freeze_loaded()``."""
    engine = load()

    def floor() -> bytes:
        return orjson.dumps(orjson.loads(raw))

    def plain() -> bytes:
        return _plain(engine, raw)

    def plain_paused() -> bytes:
        with paused():
            return _plain(engine, raw)

    best = [float("inf")] * 3
    for _ in range(repeat):
        for i, fn in enumerate((floor, plain, plain_paused)):
            best[i] = min(best[i], _timed(fn))
    freeze_loaded()
    try:
        frozen_floor = _best(floor, repeat)
        frozen = _best(plain_paused, repeat)
    finally:
        gc.unfreeze()
    base = best[0]
    write(
        f"  {label:<6} floor {base * 1e3:8.2f}ms  collector on {best[1] / base:5.2f}x  "
        f"paused {best[2] / base:5.2f}x  frozen+paused {frozen / base:5.2f}x  "
        f"(the floor itself, frozen: {frozen_floor / base:.2f}x)\n"
    )


TURNS_TARGET = 1.0
"""Issue 36: a 60-turn pi conversation replayed through the message cache, at most the floor."""


def replay_turns(payload: dict[str, Any], turns: int, rounds: int, write: Write) -> float:
    """The first ``turns`` requests of a conversation, each through a fresh engine's cache
    (``Engine.outbound_bytes``) and through ``Engine.outbound`` (parse, rewrite, serialise);
    summed best times per request against the summed orjson floor. Returns the cache's ratio."""
    bodies = list(itertools.islice(pi_turns(payload), turns))
    best = [[float("inf")] * len(bodies) for _ in range(3)]
    for _ in range(rounds):
        engine = load()
        for i, raw in enumerate(bodies):
            runs = (
                partial(_floor, raw),
                partial(engine.outbound_bytes, raw, env={}),
                partial(_plain, engine, raw),
            )
            for k in range(len(runs)):
                which = (i + k) % len(runs)
                best[which][i] = min(best[which][i], _timed(runs[which]))
    floor, cached, plain = (sum(column) for column in best)
    ratio = cached / floor
    verdict = "ok" if ratio <= TURNS_TARGET else "MISSED"
    write(
        f"  {len(bodies)} turns, last {len(bodies[-1]) / 1e3:.0f} KB: floor {floor * 1e3:.1f}ms  "
        f"Engine.outbound_bytes {ratio:.2f}x <= {TURNS_TARGET}x {verdict:<6} "
        f"(Engine.outbound: {plain / floor:.2f}x)\n"
    )
    _turn_parts(bodies, best[0], best[1], write)
    return ratio


def _turn_parts(bodies: list[bytes], floor: list[float], cached: list[float], write: Write) -> None:
    """Where the replay's time goes: a fresh engine's first request, the turns under the
    cache's ``min_body`` (the plain path), the first one stored, and the rest (served)."""
    small = next((i for i, raw in enumerate(bodies) if len(raw) >= DEFAULT_MIN_BODY), len(bodies))
    parts = [("first request", 0, 1), (f"turns 1-{small - 1} (< min_body)", 1, small)]
    parts += [(f"turns {small}-{small + 1} (seen, stored)", small, small + 2)]
    parts += [(f"turns {small + 2}-{len(bodies) - 1} (served)", small + 2, len(bodies))]
    total = sum(floor)
    shown = []
    for label, start, end in parts:
        f, c = sum(floor[start:end]), sum(cached[start:end])
        if end > start:
            shown.append(f"{label} {c * 1e3:.2f}/{f * 1e3:.2f}ms (+{(c - f) / total:.2f})")
    write("    cached/floor, (+ excess / summed floor): " + ", ".join(shown) + "\n")
