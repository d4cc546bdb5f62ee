"""The best minimal / bare ratio the codec leaves: ``python -m bench.ceiling``.

Issue 31 asks the minimal app (``bench.front_apps:minimal``, every message
validated both ways) for at least 0.50 of the bare app's req/s. This says
what the least work a typed, validated answer needs would allow, if every
other piece of the app (the HTTP rules, the era, the session, the handler,
the ASGI messages) cost nothing. Every figure is counted by valgrind's
callgrind (instructions in user space, which do not move with the
machine's load):

- ``bare`` and ``minimal`` served by one uvicorn worker each, as
  ``bench.front`` serves them (httptools, ``--loop``), given ``--requests``
  and then three times as many of the bench's stateless ``tools/call echo``
  on one keep-alive connection by a client outside valgrind: the difference
  over the difference of requests is the cost per request, start-up and
  shut-down cancelled out;
- the codec's least work for that call, in this process: ``decode`` of the
  body with its ``Mcp-*`` headers (the typed request a handler is given),
  the schema's check of the echo's result, and `encode_answer` of the
  response; and pydantic's own validation of the request alone
  (``validate_json`` of ``CallToolRequest``), what any typed read costs.

Reported: each figure, and the ceiling ``bare / (bare + least)``.
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.http import uvicorn_command
from bench.inprocess import ROOT, scope_and_body

TARGET = 0.50
"""Issue 31's bound on minimal / bare req/s."""

RESULT = {
    "content": [{"type": "text", "text": "hello"}],
    "resultType": "complete",
    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "bench-minimal", "version": "1"}},
}
"""The minimal app's answer to the bench call, as its session completes it."""

_TOTALS = re.compile(rb"^(?:summary|totals): (\d+)", re.M)


def _totals(out: Path) -> int:
    found = _TOTALS.search(out.read_bytes())
    if found is None:
        raise RuntimeError(f"no totals in {out}")
    return int(found.group(1))


def _request() -> bytes:
    scope, body = scope_and_body()
    fields = b"".join(name + b": " + value + b"\r\n" for name, value in scope["headers"])
    return b"POST /mcp HTTP/1.1\r\n" + fields + b"\r\n" + body


def _exchange(connection: socket.socket, request: bytes) -> None:
    """One request sent and its whole answer read (its Content-Length)."""
    connection.sendall(request)
    received = b""
    while True:
        chunk = connection.recv(65536)
        if not chunk:
            raise RuntimeError("the server closed the connection")
        received += chunk
        head, found, body = received.partition(b"\r\n\r\n")
        if found:
            length = re.search(rb"content-length: *(\d+)", head, re.I)
            if length is None or not head.startswith(b"HTTP/1.1 200"):
                raise RuntimeError(f"not a 200 with a length: {head[:200]!r}")
            if len(body) >= int(length.group(1)):
                return


def served(app: str, requests: int, loop: str, work: Path) -> int:
    """Instructions of a uvicorn worker serving ``app`` ``requests`` times, start to end."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    out = work / f"{app}-{requests}.out"
    command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
    command += uvicorn_command([f"bench.front_apps:{app}"], str(port), loop=loop)
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    server = subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.DEVNULL)
    try:
        connection = _connected(port, server)
        request = _request()
        with connection:
            for _ in range(requests):
                _exchange(connection, request)
    finally:
        server.send_signal(signal.SIGINT)  # uvicorn's graceful stop: callgrind writes on exit
        server.wait(120)
    return _totals(out)


def _connected(port: int, server: subprocess.Popen[bytes]) -> socket.socket:
    deadline = time.monotonic() + 120  # valgrind starts Python about 50 times slower
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError("the server exited before it listened")
        try:
            return socket.create_connection(("127.0.0.1", port))
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("the server did not listen in time")


def per_request(app: str, requests: int, loop: str, work: Path) -> float:
    """``app``'s instructions per request under uvicorn (see the module)."""
    fewer = served(app, requests, loop, work)
    more = served(app, 3 * requests, loop, work)
    return (more - fewer) / (2 * requests)


def _pieces() -> dict[str, Callable[[], object]]:
    from mcp_schema import codec
    from mcp_schema import v2026_07_28 as mcp
    from mcp_schema._codec.encoding import encode_answer
    from mcp_schema._codec.schemas import Target, validator

    scope, body = scope_and_body()
    headers = {k.decode(): v.decode() for k, v in scope["headers"] if k.startswith(b"mcp-")}
    result = validator(Target("mcp_schema.v2026_07_28", "CallToolResult"))
    if not result.is_valid(RESULT):
        raise RuntimeError("the bench's result is not a valid CallToolResult")
    response = {"jsonrpc": "2.0", "id": 1, "result": RESULT}
    return {
        "decode": functools.partial(codec.decode, body, headers=headers),
        "result check": functools.partial(result.is_valid, RESULT),
        "encode_answer": functools.partial(encode_answer, response),
        "pydantic alone": functools.partial(
            mcp.CallToolRequest.__pydantic_validator__.validate_json, body
        ),
        "nothing": lambda: None,
    }


def counted(piece: str, calls: int) -> None:
    """``piece`` called ``calls`` times inside ``functools.reduce``, the one
    function callgrind counts (`in_process`); warmed up first."""
    call = _pieces()[piece]
    for _ in range(200):
        call()

    def run(_: object, __: object) -> None:
        for _ in range(calls):
            call()

    functools.reduce(run, [0], None)


def in_process(piece: str, calls: int, work: Path) -> float:
    """Instructions per call of one codec piece (see the module)."""
    out = work / f"piece-{piece.replace(' ', '-')}.out"
    command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
    command += ["--collect-atstart=no", "--toggle-collect=functools_reduce"]
    command += [sys.executable, "-m", "bench.ceiling", "--piece", piece, "--requests", str(calls)]
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    subprocess.run(command, cwd=ROOT, env=env, check=True, capture_output=True)
    return _totals(out) / calls


def measure(requests: int, loop: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="bench-ceiling-") as where:
        work = Path(where)
        figures = {app: per_request(app, requests, loop, work) for app in ("bare", "minimal")}
        nothing = in_process("nothing", requests, work)
        for piece in ("decode", "result check", "encode_answer", "pydantic alone"):
            figures[piece] = in_process(piece, requests, work) - nothing
    return figures


def report(figures: dict[str, float], loop: str) -> None:
    bare, minimal = figures["bare"], figures["minimal"]
    least = figures["decode"] + figures["result check"] + figures["encode_answer"]
    print(f"instructions per request (callgrind; uvicorn httptools, {loop}):")
    for name, value in figures.items():
        print(f"  {name:<16} {value:>11,.0f}")
    print(f"  {'least (codec)':<16} {least:>11,.0f}  decode + result check + encode_answer")
    ceilings = {
        "minimal / bare": bare / minimal,
        "ceiling, the codec's least": bare / (bare + least),
        "ceiling, pydantic alone": bare / (bare + figures["pydantic alone"]),
    }
    for name, ratio in ceilings.items():
        print(f"  {name:<28} {ratio:5.2f}  (target {TARGET:.2f})")
    budget = bare * (1 / TARGET - 1)
    print(
        f"  the app's own budget at the target: {budget:,.0f}; minimal's own {minimal - bare:,.0f}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--loop", default="uvloop", choices=["asyncio", "uvloop"])
    parser.add_argument("--piece", help=argparse.SUPPRESS)  # a child under callgrind
    args = parser.parse_args(argv)
    if args.piece is not None:
        counted(args.piece, args.requests)
        return 0
    report(measure(args.requests, args.loop), args.loop)
    return 0


if __name__ == "__main__":
    sys.exit(main())
