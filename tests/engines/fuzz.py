"""``make fuzz``: a million hostile inputs through ``codec.decode``.

Inputs are derived from real messages (the official examples and the SDK
captures) by byte flips, truncation, splicing, deep nesting, odd numbers and
wrong id types, plus plain random bytes; structural families add nesting
inside the message, huge and non-finite numbers, repeated members, header
maps (as a mapping or ASGI byte pairs) and ``Correlator`` sessions with both
senders. Inputs arrive as bytes, bytearray, memoryview or str. Every input
must end in a decoded message that encodes back to the same JSON value, or
a typed ``McpError``; anything else is a crash (or a lossy decode) and fails
the run. The slowest input is reported, to catch
super-linear behaviour.

Usage: ``python -m tests.engines.fuzz [COUNT] [--seed N]``.
"""

from __future__ import annotations

import argparse
import functools
import json
import random
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from codegen.spec import spec_dir
from mcp_schema import SUPPORTED_VERSIONS, codec
from mcp_schema.errors import McpError

DATA = Path(__file__).resolve().parent.parent / "data"


Sender = Literal["client", "server"]


def corpus() -> list[bytes]:
    seeds = [
        p.read_bytes()
        for version in SUPPORTED_VERSIONS
        for p in sorted((spec_dir() / version / "examples").glob("*/*"))
    ]
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


NUMBERS = [
    b"1e400",
    b"-1E+999",
    b"1" * 400 + b".0",
    b"1e308",
    b"9007199254740993.0",
    b"5.0",
    b"-0",
    b"1" * 5000,
    b"0.1e-400",
    b"NaN",
    b"Infinity",
    b"123456789012345678901234567890",
]
ENVELOPE = [b"jsonrpc", b"id", b"method", b"params", b"result", b"error", b"m\\u0065thod"]


def structural(seed: bytes, rng: random.Random) -> bytes:
    """Nesting inside the message, odd numbers, repeated members (string surgery on JSON)."""
    kind = rng.randrange(4)
    if kind == 0:  # nest a value deeply inside the object
        depth = rng.choice([50, 199, 201, 1000, 50_000])
        opener, closer = rng.choice([(b"[", b"]"), (b'{"a":', b"}")])
        inner = opener * depth + rng.choice([b'"NaN"', b"1e400", b"1", b"{}"]) + closer * depth
        return seed[:1] + b'"deep": ' + inner + b", " + seed[1:]
    if kind == 1:  # a number somewhere a value goes
        at = [i for i in range(len(seed)) if seed[i : i + 1] == b":"]
        if not at:
            return seed
        i = rng.choice(at) + 1
        end = i
        while end < len(seed) and seed[end : end + 1] not in (b",", b"}"):
            end += 1
        return seed[:i] + b" " + rng.choice(NUMBERS) + seed[end:]
    if kind == 2:  # a repeated envelope member, at the front or the back
        member = (
            b'"' + rng.choice(ENVELOPE) + b'": ' + rng.choice([b'"ping"', b"1", b"{}", b"null"])
        )
        if rng.random() < 0.5:
            return seed[:1] + member + b", " + seed[1:]
        return seed.rstrip()[:-1] + b", " + member + b"}"
    return seed[:1] + b'"pad": "' + b"x" * rng.choice([100, 20_000]) + b'", ' + seed[1:]


HEADER_NAMES = [
    "MCP-Protocol-Version",
    "mcp-method",
    "Mcp-Name",
    "MCP-NAME",
    "Mcp-Param-City",
    "content-type",
]
HEADER_VALUES = [
    "2026-07-28",
    "2025-11-25",
    "2099-01-01",
    "tools/call",
    "tools/list",
    "ping",
    "evil",
    "",
    " x ",
    "=?base64?=",
    "=?base64?!!?=",
    "=?base64?dG9vbHMvY2FsbA==?=",
    "Z\u00fcrich",
    "a\r\nb",
    "\x00",
    "x" * 5000,
]


def header_map(rng: random.Random) -> Any:
    """Hostile header values in both accepted shapes (a str mapping, ASGI byte pairs)."""
    pairs = [
        (rng.choice(HEADER_NAMES), rng.choice(HEADER_VALUES)) for _ in range(rng.randint(0, 6))
    ]
    if rng.random() < 0.5:
        return dict(pairs)
    return [(k.lower().encode(), v.encode("utf-8", "surrogatepass")) for k, v in pairs]


def as_input(raw: bytes, rng: random.Random) -> bytes | bytearray | memoryview | str:
    kind = rng.randrange(8)
    if kind == 0:
        return bytearray(raw)
    if kind == 1:
        return memoryview(raw)
    if kind == 2:
        return raw.decode("utf-8", "surrogateescape")
    return raw


def session(seeds: list[bytes], rng: random.Random) -> list[tuple[bytes, Sender | None]]:
    """A few messages of one connection: requests and replies of both peers, ids colliding."""
    steps: list[tuple[bytes, Sender | None]] = []
    for _ in range(rng.randint(2, 8)):
        rid = rng.choice([0, 1, 1, "1", 2])
        sender: Sender | None = rng.choice([None, "client", "server"])
        message = rng.choice(
            [
                {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": "t"}},
                {"jsonrpc": "2.0", "id": rid, "method": "roots/list"},
                {"jsonrpc": "2.0", "id": rid, "method": "ping"},
                {"jsonrpc": "2.0", "id": rid, "result": {"content": []}},
                {"jsonrpc": "2.0", "id": rid, "result": {"roots": []}},
                {"jsonrpc": "2.0", "id": rid, "result": {}},
                {"id": rid, "result": {}},
                {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no"}},
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": {"requestId": rid},
                },
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {},
                        "clientInfo": {"name": "c", "version": "1"},
                    },
                },
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "result": {
                        "protocolVersion": rng.choice(["2025-11-25", "2099-01-01"]),
                        "capabilities": {},
                        "serverInfo": {"name": "s", "version": "1"},
                    },
                },
            ]
        )
        raw = json.dumps(message).encode()
        steps.append((mutate(raw, rng) if rng.random() < 0.2 else raw, sender))
    if rng.random() < 0.3:
        steps.append((rng.choice(seeds), None))
    return steps


def _as_bytes(data: bytes | bytearray | memoryview | str) -> bytes:
    return data.encode("utf-8", "surrogateescape") if isinstance(data, str) else bytes(data)


def run(count: int, seed: int, report: Callable[[str], None] = print) -> Counter[str]:
    rng = random.Random(seed)
    seeds = corpus()
    outcomes: Counter[str] = Counter()
    slowest: tuple[float, bytes] = (0.0, b"")
    crashes: list[tuple[bytes, str]] = []
    for raw in seeds:  # build every validator first: timings then show the input, not the build
        for version in (None, *SUPPORTED_VERSIONS):
            try:
                codec.decode(raw, version=version, method="tools/call")
            except McpError:
                pass
    started = time.perf_counter()
    done = 0
    while done < count:
        family = rng.random()
        calls: list[functools.partial[Any]] = []
        if family < 0.1:  # a Correlator session, both senders
            correlator = codec.Correlator(version=rng.choice([None, "2025-11-25"]), max_pending=4)
            for raw, sender in session(seeds, rng):
                data = as_input(raw, rng)
                calls.append(functools.partial(correlator.decode, data, sender=sender))
        else:
            seed_raw = rng.choice(seeds)
            raw = structural(seed_raw, rng) if family < 0.3 else mutate(seed_raw, rng)
            data = as_input(raw, rng)
            version = rng.choice([None, None, *SUPPORTED_VERSIONS])
            method = rng.choice([None, "tools/call"])
            headers = header_map(rng) if family < 0.4 else None
            calls.append(
                functools.partial(
                    codec.decode, data, version=version, method=method, headers=headers
                )
            )
        for call in calls:
            t0 = time.perf_counter()
            try:
                message = call()
                # What is accepted is kept: encoding gives back the same JSON value.
                if json.loads(codec.encode(message)) == json.loads(_as_bytes(call.args[0])):
                    outcomes["decoded"] += 1
                else:
                    outcomes["LOSSY"] += 1
                    crashes.append((_as_bytes(call.args[0])[:200], "re-encoded differently"))
            except McpError as err:
                outcomes[f"McpError {err.code}"] += 1
            except Exception as exc:  # counting exactly these is the point
                outcomes["CRASH"] += 1
                crashes.append((_as_bytes(call.args[0])[:200], repr(exc)[:200]))
            took = time.perf_counter() - t0
            if took > slowest[0]:
                slowest = (took, _as_bytes(call.args[0]))
            done += 1
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
    outcomes = run(args.count, args.seed)
    return 1 if outcomes["CRASH"] or outcomes["LOSSY"] else 0


if __name__ == "__main__":
    sys.exit(main())
