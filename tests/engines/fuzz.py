"""``make fuzz``: a million hostile inputs through ``codec.decode``.

Inputs are derived from real messages (the official examples and the SDK
captures) by byte flips, truncation, splicing, deep nesting, odd numbers and
wrong id types, plus plain random bytes. Every input must end in a decoded
message or a typed ``McpError``; anything else is a crash and fails the run.
The slowest input is reported, to catch super-linear behaviour.

Usage: ``python -m tests.engines.fuzz [COUNT] [--seed N]``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from codegen.spec import spec_dir
from mcp_schema import codec
from mcp_schema.errors import McpError

DATA = Path(__file__).resolve().parent.parent / "data"


def corpus() -> list[bytes]:
    seeds = [p.read_bytes() for p in sorted((spec_dir() / "2026-07-28" / "examples").glob("*/*"))]
    for capture in sorted((DATA / "captures").glob("*.jsonl")):
        for line in capture.read_text().splitlines():
            record = json.loads(line)
            if "message" in record:
                seeds.append(json.dumps(record["message"]).encode())
    return seeds


TOKENS = [
    b"NaN",
    b"-Infinity",
    b"1e999",
    b"null",
    b"true",
    b"[]",
    b"{}",
    b'"\\ud800"',
    b"123456789012345678901234567890",
    b"-0",
    b"1.0",
    b'"2.0"',
    b"\xff",
    b"\x00",
    b",",
    b'"jsonrpc"',
    b'"id"',
    b'"method"',
    b'"params"',
    b'"result"',
    b'"error"',
]


VALUES: list[object] = [
    None,
    True,
    False,
    0,
    -1,
    1.5,
    2**70,
    "",
    "x",
    "2.0",
    [],
    {},
    [1],
    {"a": 1},
    "io.modelcontextprotocol/tasks",
    "input_required",
    "complete",
    "task",
]


def mutate(seed: bytes, rng: random.Random) -> bytes:
    """Half the time a change of the JSON structure, else a change of the bytes."""
    if rng.random() < 0.5:
        changed = restructure(seed, rng)
        if changed is not None:
            return changed
    data = bytearray(seed)
    kind = rng.randrange(6)
    if kind == 0 and data:  # flip bytes
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
    elif kind == 1:  # truncate
        del data[rng.randrange(len(data) + 1) :]
    elif kind == 2:  # insert a token
        at = rng.randrange(len(data) + 1)
        data[at:at] = rng.choice(TOKENS)
    elif kind == 3:  # nest deeply
        depth = rng.choice([10, 300, 5000, 100_000])
        data = bytearray(b"[" * depth + bytes(data) + b"]" * depth)
    elif kind == 4:  # splice two messages
        return bytes(data[: rng.randrange(len(data) + 1)]) + seed[rng.randrange(len(seed) + 1) :]
    else:  # random bytes
        return rng.randbytes(rng.randint(0, 64))
    return bytes(data)


def restructure(seed: bytes, rng: random.Random) -> bytes | None:
    """Replace, drop or add a member anywhere in the message (still valid JSON)."""
    try:
        message = json.loads(seed)
    except ValueError:
        return None
    nodes: list[object] = []

    def collect(node: object) -> None:
        if isinstance(node, (dict, list)):
            nodes.append(node)
            for child in node.values() if isinstance(node, dict) else node:
                collect(child)

    collect(message)
    if not nodes:
        return None
    for _ in range(rng.randint(1, 3)):
        node = rng.choice(nodes)
        if isinstance(node, dict) and node:
            key = rng.choice(list(node))
            action = rng.randrange(3)
            if action == 0:
                del node[key]
            elif action == 1:
                node[key] = rng.choice(VALUES)
            else:
                node[rng.choice([key + "_", "x-extra", "_meta", "resultType", "id"])] = rng.choice(
                    VALUES
                )
        elif isinstance(node, list) and node:
            node[rng.randrange(len(node))] = rng.choice(VALUES)
    return json.dumps(message).encode()


def run(count: int, seed: int, report: Callable[[str], None] = print) -> Counter[str]:
    rng = random.Random(seed)
    seeds = corpus()
    outcomes: Counter[str] = Counter()
    slowest = (0.0, b"")
    crashes: list[tuple[bytes, str]] = []
    for raw in seeds:  # build every validator first: timings then show the input, not the build
        for version in (None, "2025-11-25", "2026-07-28"):
            try:
                codec.decode(raw, version=version, method="tools/call")
            except McpError:
                pass
    started = time.perf_counter()
    for _ in range(count):
        raw = mutate(rng.choice(seeds), rng)
        version = rng.choice([None, None, "2025-11-25", "2026-07-28"])
        t0 = time.perf_counter()
        try:
            codec.decode(raw, version=version, method=rng.choice([None, "tools/call"]))
            outcomes["decoded"] += 1
        except McpError as err:
            outcomes[f"McpError {err.code}"] += 1
        except Exception as exc:  # counting exactly these is the point
            outcomes["CRASH"] += 1
            crashes.append((raw[:200], repr(exc)[:200]))
        took = time.perf_counter() - t0
        if took > slowest[0]:
            slowest = (took, raw)
    elapsed = time.perf_counter() - started
    report(f"{count:,} inputs in {elapsed:.1f} s (seed {seed})")
    for outcome, n in outcomes.most_common():
        report(f"  {outcome:<18} {n:>9,}")
    report(f"  slowest input: {slowest[0] * 1000:.1f} ms for {len(slowest[1]):,} bytes")
    for raw, why in crashes[:10]:
        report(f"  crash: {why} on {raw!r}")
    return outcomes


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.engines.fuzz")
    parser.add_argument("count", nargs="?", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=random.SystemRandom().randrange(2**32))
    args = parser.parse_args()
    return 1 if run(args.count, args.seed)["CRASH"] else 0


if __name__ == "__main__":
    sys.exit(main())
