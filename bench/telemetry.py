"""What telemetry costs the front door: ``python -m bench.telemetry [--quick]``.

The minimal app of ``bench.front`` three ways (``bench.telemetry_apps``):
``off``, ``api`` (the API with no SDK) and ``sdk`` (an SDK recording every
span and metric to sinks that drop), loaded as ``bench.front`` loads its rows
(wrk pinned to one core, each server pinned to the other, alternating
rounds, medians). Targets of issue 36, item 3, print as PASS or MISS: ``api``
at least 0.98 of ``off``'s req/s, ``sdk`` at least 0.90. Beside them, the
SDK's own floor (``bench.telemetry_floor``: one span and one duration record
made on the SDK alone, pinned to the server core) and the best ``sdk / off``
that floor leaves any instrumentation. Recorded under ``"telemetry"`` in
``bench/results.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench import telemetry_floor
from bench.front import (
    HTTP,
    LOOP,
    RESULTS,
    SERVER_CORE,
    WARM_UP,
    Sample,
    _entered,
    _median,
    check,
    missing,
    pinned,
    settings,
    wrk,
    wrk_script,
)
from bench.gateway import Hop
from bench.http import uvicorn_command

ROWS = {name: [f"bench.telemetry_apps:{name}"] for name in ("off", "api", "sdk")}
TARGETS = [("api / off req/s", "api", 0.98), ("sdk / off req/s", "sdk", 0.90)]


def measure(seconds: int, rounds: int) -> dict[str, Any]:
    samples: dict[str, list[Sample]] = {name: [] for name in ROWS}
    with contextlib.ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-otel-")))
        script = wrk_script(work)
        servers = {}
        for name, target in ROWS.items():
            command = [*pinned(SERVER_CORE), *uvicorn_command(target, "{port}", HTTP, LOOP)]
            servers[name] = _entered(stack, Hop(command))
        for name, (port, pids) in servers.items():
            check(name, port)
            wrk(port, script, WARM_UP, pids)
        names = list(servers)
        for turn in range(rounds):
            for name in names[turn % len(names) :] + names[: turn % len(names)]:
                port, pids = servers[name]
                samples[name].append(wrk(port, script, seconds, pids))
    return {
        "rows": {n: _median(s) for n, s in samples.items()},
        "rounds": rounds,
        "seconds": seconds,
    }


def targets(result: dict[str, Any]) -> list[tuple[str, str, str, bool]]:
    """(name, measured, goal, passed), as ``bench.__main__.Target`` takes them."""
    rows = result["rows"]
    found = []
    for name, row, bound in TARGETS:
        ratio = rows[row].rps / rows["off"].rps
        by_cpu = rows["off"].server_us / rows[row].server_us
        shown = f"{ratio:.2f} ({rows[row].rps:,.0f} / {rows['off'].rps:,.0f}); by CPU {by_cpu:.2f}"
        found.append((f"telemetry: {name}", shown, f">= {bound:.2f}", ratio >= bound))
    return found


def measured_floor() -> dict[str, Any]:
    """`bench.telemetry_floor` in a process of its own, pinned to the server core."""
    command = [*pinned(SERVER_CORE), sys.executable, "-m", "bench.telemetry_floor", "--json"]
    done = subprocess.run(command, capture_output=True, text=True, check=True, timeout=600)
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.telemetry", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="3 shorter rounds")
    parser.add_argument("--out", type=Path, default=RESULTS, help="the results file")
    args = parser.parse_args(argv)
    if lacking := missing():
        print(f"bench.telemetry needs {', '.join(lacking)} (apt-get install {' '.join(lacking)})")
        return 2
    seconds, rounds = settings(args.quick)
    result = measure(seconds, rounds)
    for name, row in result["rows"].items():
        print(
            f"  {name:<4} {row.rps:>9,.0f} req/s  p99 {row.p99_ms:>6.2f} ms  server {row.server_us:>6,.0f} us/req"
        )
    for name, measured, goal, passed in targets(result):
        print(f"  {'PASS' if passed else 'MISS'} {name}: {measured} (goal {goal})")
    sdk_floor = measured_floor()
    best = telemetry_floor.bound(result["rows"]["off"].server_us, sdk_floor["floor_us"])
    print(
        f"  the SDK's own floor: {sdk_floor['floor_us']:.1f} CPU us/request (span "
        f"{sdk_floor['span_us']:.1f}, duration record {sdk_floor['record_us']:.1f}): "
        f"no instrumentation's sdk / off can pass {best:.2f} by CPU"
    )
    recorded = json.loads(args.out.read_text()) if args.out.exists() else {}
    recorded["telemetry"] = {
        "rows": {
            n: {"rps": r.rps, "p99_ms": r.p99_ms, "server_us": r.server_us}
            for n, r in result["rows"].items()
        },
        "targets": [
            dict(zip(("name", "measured", "goal", "passed"), t, strict=True))
            for t in targets(result)
        ],
        "sdk_floor": {**sdk_floor, "best_sdk_over_off": best},
    }
    args.out.write_text(json.dumps(recorded, indent=2, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
