"""Drawing speed: the generated strategies against hypothesis-jsonschema, per definition.

Usage: ``python -m bench.strategies [--examples N] [--reference-examples N]
[--budget S] [--schema KEY]`` (``make bench-strategies``).

Both sources draw through the same Hypothesis harness (fixed seeds, generate
phase only, nothing checked), so a ratio is draw cost against draw cost on the
same machine in the same run. A definition's time includes building its
strategy, which is what a test suite pays. hypothesis-jsonschema stops after
``--budget`` seconds per definition (its big unions take seconds per draw);
the draws it managed by then set its rate. Also prints whole messages
(``mcp_schema.testing.messages``) drawn per second per version.
"""

from __future__ import annotations

import argparse
import functools
import math
import statistics
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.errors import HypothesisException, HypothesisWarning

from codegen import spec
from mcp_schema.codec import TASKS_EXTENSION
from mcp_schema.testing import messages
from tests.engines import conformance as c

TARGET_RATIO = 10.0


class _Budget(Exception):
    """Ends a source's draws for one definition when its time is up."""


@dataclass
class Rate:
    draws: int
    seconds: float

    @property
    def per_draw(self) -> float:
        return self.seconds / self.draws if self.draws else math.inf


def draw_rate(strategy: Callable[[], st.SearchStrategy[Any]], examples: int, budget: float) -> Rate:
    draws = 0
    started = time.perf_counter()

    @settings(
        max_examples=examples,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy())
    def draw(value: Any) -> None:
        nonlocal draws
        draws += 1
        if time.perf_counter() - started > budget:
            raise _Budget

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", HypothesisWarning)
            draw()
    except (_Budget, HypothesisException):
        pass
    return Rate(draws, time.perf_counter() - started)


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.strategies", description=__doc__)
    parser.add_argument("--examples", type=int, default=50, help="draws per definition, ours")
    parser.add_argument(
        "--reference-examples", type=int, default=10, help="draws per definition, reference"
    )
    parser.add_argument("--budget", type=float, default=3.0, help="seconds per definition cap")
    parser.add_argument("--schema", action="append", choices=c.SCHEMA_KEYS)
    args = parser.parse_args()

    print(
        f"{'schema':<18} {'defs':>4} {'ours draws/s':>12} {'h-jsonschema draws/s':>20} "
        f"{'ratio min':>9} {'median':>7} {'geomean':>7}  slowest ratio"
    )
    missed: list[str] = []
    for key in args.schema or c.SCHEMA_KEYS:
        ratios: dict[str, float] = {}
        ours_total, theirs_total = Rate(0, 0.0), Rate(0, 0.0)
        for name in c.def_names(key):
            if name in spec.repeated_defs(key):
                continue  # the core definition itself, measured under its own schema
            ours = draw_rate(
                functools.partial(c.generated_strategy, key, name), args.examples, args.budget
            )
            theirs = draw_rate(
                functools.partial(c.strategy_for, key, name), args.reference_examples, args.budget
            )
            for total, rate in ((ours_total, ours), (theirs_total, theirs)):
                total.draws += rate.draws
                total.seconds += rate.seconds
            ratios[name] = theirs.per_draw / ours.per_draw
            if ratios[name] < TARGET_RATIO:
                missed.append(f"{key} {name}: {ratios[name]:.1f}x")
        finite = [r for r in ratios.values() if math.isfinite(r)]
        slowest = min(ratios, key=lambda n: ratios[n])
        print(
            f"{key:<18} {len(ratios):>4} {ours_total.draws / ours_total.seconds:>12.0f} "
            f"{theirs_total.draws / theirs_total.seconds:>20.1f} {min(ratios.values()):>8.1f}x "
            f"{statistics.median(ratios.values()):>6.1f}x "
            f"{math.exp(statistics.fmean(map(math.log, finite))):>6.1f}x  "
            f"{slowest} {ratios[slowest]:.1f}x"
        )
    print(f"definitions under {TARGET_RATIO:.0f}x: {len(missed)}", *missed, sep="\n  ")

    print("\nwhole messages (mcp_schema.testing.messages):")
    sessions = [
        (key.split("/")[0], (TASKS_EXTENSION,) if "/" in key else ()) for key in c.SCHEMA_KEYS
    ]
    for version, extensions in sessions:
        rate = draw_rate(lambda v=version, e=extensions: messages(v, extensions=e), 500, 60.0)
        label = version + (" + tasks" if extensions else "")
        print(f"  {label:<20} {rate.draws / rate.seconds:>8.0f} messages/s ({rate.draws} drawn)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
