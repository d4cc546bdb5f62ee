"""The gateway's upstream client against httpx: ``python -m bench.upstream_client``.

Both clients send ``bench.http``'s stateless ``tools/call echo`` to the bare
ASGI app of ``bench.front_apps`` (one uvicorn worker, httptools, pinned to
core 1) from ``CONCURRENCY`` tasks in one asyncio process (pinned to core
0), as the gateway sends it: the request's fields given as bytes, the
answer read whole. httpx goes straight to its transport, as the gateway
did (``httpx.AsyncHTTPTransport.handle_async_request``). Rounds alternate;
reported per client: requests per second, and the client process's CPU
time per request (its own cost, what the gateway pays per request on top
of its reading of the messages).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import time
from collections.abc import Awaitable, Callable

import httpx

from bench.http import Server, stateless_call
from mcp_schema.http.pool import HttpClient

CONCURRENCY = 8
ROUNDS = 5
SECONDS = 2.0


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def _run(send: Callable[[], Awaitable[None]], seconds: float) -> tuple[float, float]:
    done = 0
    stop = time.monotonic() + seconds

    async def worker() -> None:
        nonlocal done
        while time.monotonic() < stop:
            await send()
            done += 1

    cpu, start = _cpu(), time.monotonic()
    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    elapsed = time.monotonic() - start
    return done / elapsed, (_cpu() - cpu) / done * 1e6


async def _clients(port: int, seconds: float, rounds: int) -> dict[str, list[tuple[float, float]]]:
    body, extra = stateless_call()
    data = json.dumps(body, separators=(",", ":")).encode()
    url = f"http://127.0.0.1:{port}/mcp"
    fields = [
        (b"host", f"127.0.0.1:{port}".encode()),
        (b"content-type", b"application/json"),
        (b"accept", b"application/json, text/event-stream"),
        *((k.lower().encode(), v.encode()) for k, v in extra.items()),
    ]
    ours = HttpClient()
    transport = httpx.AsyncHTTPTransport(
        limits=httpx.Limits(max_connections=None, max_keepalive_connections=64)
    )
    timeout = {"timeout": httpx.Timeout(30.0, read=None).as_dict()}

    async def with_ours() -> None:
        response = await ours.open("POST", url, fields, data)
        while await response.receive():
            pass
        await response.aclose()

    async def with_httpx() -> None:
        request = httpx.Request("POST", url, headers=fields, content=data, extensions=timeout)
        response = await transport.handle_async_request(request)
        async for _ in response.aiter_raw():
            pass
        await response.aclose()

    sends = {"mcp_schema.http.pool": with_ours, "httpx (transport)": with_httpx}
    found: dict[str, list[tuple[float, float]]] = {name: [] for name in sends}
    for send in sends.values():
        await _run(send, 0.5)  # warm up
    for _ in range(rounds):
        for name, send in sends.items():
            found[name].append(await _run(send, seconds))
    await ours.aclose()
    await transport.aclose()
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.upstream_client", description=__doc__)
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--seconds", type=float, default=SECONDS)
    args = parser.parse_args(argv)
    with Server(["bench.front_apps:bare"]) as server:
        found = asyncio.run(_clients(server.port, args.seconds, args.rounds))
    print(f"upstream client, {CONCURRENCY} concurrent requests, medians of {args.rounds} rounds")
    print(f"  {'client':<24} {'req/s':>9} {'client CPU us/req':>18}")
    for name, runs in found.items():
        rps = statistics.median(r for r, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        print(f"  {name:<24} {rps:>9,.0f} {cpu:>18,.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
