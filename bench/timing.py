"""timeit-style loops, interleaved across contenders so their ratios share the machine's noise."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Timing:
    best: float
    """Seconds per call: the minimum over the repeats."""
    median: float
    loops: int
    repeats: int


def _loop(call: Callable[[], object], loops: int) -> float:
    clock = time.perf_counter
    start = clock()
    for _ in range(loops):
        call()
    return clock() - start


def calibrate(call: Callable[[], object], budget: float) -> int:
    """Loops per repeat so that one repeat lasts about ``budget`` seconds.

    A few warm-up calls come first, so a one-time cost (a lazily built
    validator or serializer) cannot make a repeat a single, slow call.
    """
    _loop(call, 3)
    loops = 1
    while True:
        elapsed = _loop(call, loops)
        if elapsed >= budget / 4 or loops >= 1 << 20:
            return max(1, round(loops * budget / max(elapsed, 1e-9)))
        loops *= 4


def compare(
    calls: Mapping[str, Callable[[], object]], *, repeats: int = 7, budget: float = 0.02
) -> dict[str, Timing]:
    """Time every call in the same rounds: round r runs each contender once, in turn."""
    loops = {name: calibrate(call, budget) for name, call in calls.items()}
    samples: dict[str, list[float]] = {name: [] for name in calls}
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            for name, call in calls.items():
                samples[name].append(_loop(call, loops[name]) / loops[name])
    finally:
        if enabled:
            gc.enable()
    return {
        name: Timing(min(s), statistics.median(s), loops[name], repeats)
        for name, s in samples.items()
    }
