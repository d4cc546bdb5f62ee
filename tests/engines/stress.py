"""``make stress``: time and peak memory of the worst hostile families at n, 2n and 4n.

Each family builds one input of size n (values, bytes, properties, messages),
then measures the call that reads it: the best of three wall-clock runs, and
the peak of Python allocations (tracemalloc) in a separate run. Linear growth
shows as ratios near 2 and 4; the input itself is built outside both.

Usage: ``python -m tests.engines.stress [--scale S]`` (S multiplies every n).
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import time
import tracemalloc
from collections.abc import Callable

from mcp_schema import codec, http_headers
from mcp_schema.cli import read_lines
from mcp_schema.errors import McpError

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"_meta": META, "name": "t"}}


def _quietly(call: Callable[[], object]) -> Callable[[], None]:
    def run() -> None:
        try:
            call()
        except McpError:
            pass

    return run


def non_finite_numbers(n: int) -> Callable[[], None]:
    """n values of 1e400 in a JSON object the schema types as JSONValue."""
    values = b",".join(b'"k%d": 1e400' % i for i in range(n))
    meta = dict(META, **{"io.modelcontextprotocol/clientCapabilities": {"experimental": {"x": {}}}})
    raw = json.dumps({**CALL, "params": {"_meta": meta, "name": "t"}}).encode()
    raw = raw.replace(b'"x": {}', b'"x": {' + values + b"}")
    return _quietly(lambda: codec.decode(raw))


def batch(n: int) -> Callable[[], None]:
    """A JSON array of n requests."""
    raw = b"[" + b",".join([json.dumps(CALL).encode()] * n) + b"]"
    return _quietly(lambda: codec.decode(raw))


def invalid_items(n: int) -> Callable[[], None]:
    """A tools/list result whose n tools are all invalid: n errors, capped in the answer."""
    raw = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": 5}] * n}}).encode()
    return _quietly(lambda: codec.decode(raw, version="2025-11-25", method="tools/list"))


def repeated_member(n: int) -> Callable[[], None]:
    """n bytes of params, then a second "method" member."""
    body = dict(CALL, params={"_meta": META, "name": "t", "arguments": {"pad": "x" * n}})
    raw = json.dumps(body).encode()[:-1] + b', "method": "tools/list"}'
    return _quietly(lambda: codec.decode(raw))


def long_string(n: int) -> Callable[[], None]:
    """A valid tools/call whose argument is an n-byte string."""
    raw = json.dumps(dict(CALL, params={"_meta": META, "name": "t", "arguments": {"s": "x" * n}}))
    data = raw.encode()

    def run() -> None:
        codec.encode(codec.decode(data))

    return run


def deep_nesting(n: int) -> Callable[[], None]:
    """Objects nested n deep inside params, with the text NaN at the bottom."""
    raw = (
        b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": '
        + (b'{"a":' * n + b'"NaN"' + b"}" * n)
        + b"}"
    )
    return _quietly(lambda: codec.decode(raw))


def tool_headers(n: int) -> Callable[[], None]:
    """A tool with n x-mcp-header properties: read once, then one request checked."""
    properties = {f"p{i}": {"type": "string", "x-mcp-header": f"H{i}"} for i in range(n)}
    tool = {"name": "t", "inputSchema": {"type": "object", "properties": properties}}
    request = dict(CALL, params={"_meta": META, "name": "t", "arguments": {"p0": "v"}})

    def run() -> None:
        compiled = http_headers.ToolHeaders(tool)
        http_headers.check_request_headers(
            http_headers.request_headers(request, compiled), request, compiled
        )

    return run


def header_variants(n: int) -> Callable[[], None]:
    """n header lines whose names differ only in case, joined into one value."""
    variants = [
        ("".join(c.upper() if (i >> j) & 1 else c for j, c in enumerate("mcp-name")), "t")
        for i in range(n)
    ]
    return _quietly(lambda: codec.decode(json.dumps(CALL).encode(), headers=variants))


def unanswered_requests(n: int) -> Callable[[], None]:
    """n requests that are never answered, through one Correlator (the table is bounded)."""
    requests = [
        json.dumps({"jsonrpc": "2.0", "id": i, "method": "ping"}).encode() for i in range(n)
    ]

    def run() -> None:
        session = codec.Correlator(version="2025-11-25")
        for raw in requests:
            try:
                session.decode(raw, sender="client")
            except McpError:
                pass

    return run


def endless_line(n: int) -> Callable[[], None]:
    """One n-byte line with no newline, read by the CLI's line reader."""
    data = b"\0" * n

    def run() -> None:
        for _ in read_lines(io.BytesIO(data)):
            pass

    return run


FAMILIES: list[tuple[str, Callable[[int], Callable[[], None]], int]] = [
    ("1e400 values in a JSONValue", non_finite_numbers, 100_000),
    ("batch of requests", batch, 100_000),
    ("invalid list items", invalid_items, 20_000),
    ("repeated member after params (bytes)", repeated_member, 4_000_000),
    ("valid string argument (bytes)", long_string, 8_000_000),
    ("nesting depth", deep_nesting, 100_000),
    ("x-mcp-header properties", tool_headers, 8_000),
    ("case variants of one header", header_variants, 20_000),
    ("unanswered requests", unanswered_requests, 20_000),
    ("CLI line without newline (bytes)", endless_line, 20_000_000),
]


# -- invalid input against valid input of the same size, in fresh processes -------------
#
# tracemalloc sees Python objects only: what a validator allocates in Rust (a
# failed union arm's record, an error rendering its instance) shows in the
# peak resident size of a process that decodes one message and exits.

_PEAK_SCRIPT = """
import sys
from mcp_schema import codec
from mcp_schema.errors import McpError

def resident(field):
    for line in open("/proc/self/status"):
        if line.startswith(field):
            return int(line.split()[1]) / 1024

data = open(sys.argv[1], "rb").read()
decode = codec.decode_dict if sys.argv[2] == "dicts" else codec.decode
try:  # a first use builds validators: not part of the message's cost
    decode(b'{"jsonrpc": "2.0", "id": 1, "method": "sampling/createMessage", "params": '
           b'{"maxTokens": 1, "messages": [{"role": "user", "content": [1]}]}}',
           version="2025-11-25")
except McpError:
    pass
open("/proc/self/clear_refs", "w").write("5")  # the peak starts again from here
before = resident("VmRSS")
try:
    decode(data, version="2025-11-25")
except McpError as err:
    assert err.code == -32602, err
    assert len(str(err.to_response())) < 65536
print(resident("VmHWM") - before)
"""


def sampling_request(size: int, valid: bool) -> bytes:
    """A sampling/createMessage request of about ``size`` bytes whose content
    items are all valid text blocks, or all the number 1 (no block at all)."""
    item = b'{"type": "text", "text": "' + b"x" * 38 + b'"}' if valid else b"1"
    count = size // (len(item) + 1)
    head = (
        b'{"jsonrpc": "2.0", "id": 1, "method": "sampling/createMessage", "params": '
        b'{"maxTokens": 1, "messages": [{"role": "user", "content": ['
    )
    return head + b",".join([item] * count) + b"]}]}}"


def peak_megabytes(data: bytes, view: str) -> float:
    import subprocess
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".json") as file:
        file.write(data)
        file.flush()
        out = subprocess.run(
            [sys.executable, "-c", _PEAK_SCRIPT, file.name, view],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    return float(out)


def dense_call(size: int) -> bytes:
    """A valid tools/call of about ``size`` bytes whose argument is an array of 1s."""
    head = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t", "arguments": {"x": ['
    return head + b",".join([b"1"] * (size // 2)) + b"]}}}"


def invalid_against_valid(sizes: tuple[int, ...] = (1_600_000, 8_000_000)) -> None:
    """Peak resident growth of one invalid sampling/createMessage (every content
    item the number 1) against valid messages of the same size: one of text
    blocks, and a tools/call whose argument is as many numbers (the same parse)."""
    print(
        f"\n{'bytes':>10} {'view':<7} {'valid text MB':>14} {'valid dense MB':>15} "
        f"{'invalid MB':>11} {'x text':>7} {'x dense':>8}"
    )
    for size in sizes:
        for view in ("models", "dicts"):
            text = peak_megabytes(sampling_request(size, True), view)
            dense = peak_megabytes(dense_call(size), view)
            invalid = peak_megabytes(sampling_request(size, False), view)
            print(
                f"{size:>10,} {view:<7} {text:14.1f} {dense:15.1f} {invalid:11.1f} "
                f"{invalid / text:7.2f} {invalid / dense:8.2f}",
                flush=True,
            )


def measure(make: Callable[[int], Callable[[], None]], n: int) -> tuple[float, float]:
    run = make(n)
    run()  # validators built, caches warm
    best = min(_timed(run) for _ in range(3))
    tracemalloc.start()
    run()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return best, peak / 2**20


def _timed(run: Callable[[], None]) -> float:
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.engines.stress")
    parser.add_argument("--scale", type=float, default=1.0)
    args = parser.parse_args(argv)
    print(
        f"{'family':<38} {'n':>11} {'time ms: n / 2n / 4n':>27} {'x4n':>5} "
        f"{'peak MB: n / 2n / 4n':>24}"
    )
    for name, make, base in FAMILIES:
        n = max(1, int(base * args.scale))
        times, peaks = zip(*(measure(make, n * k) for k in (1, 2, 4)), strict=True)
        ratio = times[2] / times[0] if times[0] else float("inf")
        print(
            f"{name:<38} {n:>11,} "
            f"{' / '.join(f'{t * 1000:7.1f}' for t in times):>27} {ratio:5.1f} "
            f"{' / '.join(f'{p:6.1f}' for p in peaks):>24}",
            flush=True,
        )
    invalid_against_valid()
    return 0


if __name__ == "__main__":
    sys.exit(main())
