"""Streamable HTTP under load: ``python -m bench.http [--quick]``.

``examples/http_server.py`` and the official Python SDK's server
(``bench/http_reference.py``, stateless mode, JSON answers), each under one
uvicorn worker on loopback, take ``tools/call echo`` from a small asyncio
HTTP/1.1 keep-alive client (``CONNECTIONS`` connections for a fixed time, the two
servers alternating in ``ROUNDS`` rounds) in
both eras: a 2026-07-28 per-request call (its ``_meta`` and headers), and a
handshake-era call after one ``initialize`` (``Mcp-Session-Id`` where the
server gives one). Reported: requests per second, p50 and p99 latency, the
CPU time each request cost the server and the load generator (on a shared
machine the server's CPU per request moves less than its requests per
second; a generator costing about as much as the server would be the
bottleneck), and the resident memory of our server at the start, middle and end of
``MEMORY_REQUESTS`` requests. Nothing here asserts: the targets print as PASS
or MISS.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CONNECTIONS = 16
ROUNDS = 5
RPS_TARGET = 3.0  # ours over the official server's requests per second
P99_TARGET = 1 / 3  # ours over the official server's p99
MEMORY_REQUESTS = 100_000
HTTP = "httptools"  # uvicorn's HTTP/1.1 parser for both servers (--http h11: the pure-Python one)
SERVERS = {
    "mcp-schema": ["--app-dir", str(ROOT / "examples"), "http_server:app"],
    "official mcp": ["bench.http_reference:app"],
}
_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
}
_ECHO = {"name": "echo", "arguments": {"text": "hello"}}


@dataclass
class Load:
    requests: int
    seconds: float
    rps: float
    p50_ms: float
    p99_ms: float
    errors: int
    server_us: float
    """The server process's CPU time (user + system) per request."""
    client_us: float
    """The load generator's CPU time per request."""


def _request(port: int, body: dict[str, Any], headers: dict[str, str]) -> bytes:
    data = json.dumps(body, separators=(",", ":")).encode()
    lines = [
        "POST /mcp HTTP/1.1",
        f"Host: 127.0.0.1:{port}",  # the official server refuses a Host without the port
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        f"Content-Length: {len(data)}",
        *(f"{k}: {v}" for k, v in headers.items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + data


async def _response(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    status_line, *fields = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in fields:
        if ":" in line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    if "content-length" in headers:
        body = await reader.readexactly(int(headers["content-length"]))
    else:  # chunked: the only other framing an ASGI server gives a request's answer
        parts = []
        while True:
            size = int((await reader.readuntil(b"\r\n")).strip().split(b";")[0], 16)
            parts.append(await reader.readexactly(size + 2))
            if size == 0:
                break
        body = b"".join(p[:-2] for p in parts)
    return int(status_line.split()[1]), headers, body


def stateless_call() -> tuple[dict[str, Any], dict[str, str]]:
    """The 2026-07-28 ``tools/call echo`` (its ``_meta``) and its ``Mcp-*`` headers."""
    params = {**_ECHO, "_meta": _META}
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "echo"}
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}, headers


def era_requests(era: str, port: int) -> bytes:
    """The ``tools/call`` bytes one connection sends again and again in ``era``."""
    if era == "2026-07-28":
        return _request(port, *stateless_call())
    with socket.create_connection(("127.0.0.1", port)) as sock:
        init = {
            "protocolVersion": era,
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        }
        sock.sendall(
            _request(port, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}, {})
        )
        answer = sock.recv(65536).decode("latin-1")
    session = [
        line.split(":", 1)[1].strip()
        for line in answer.split("\r\n")
        if line.lower().startswith("mcp-session-id:")
    ]
    headers = {"MCP-Protocol-Version": era, **({"Mcp-Session-Id": session[0]} if session else {})}
    with socket.create_connection(("127.0.0.1", port)) as sock:  # notifications/initialized
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        sock.sendall(_request(port, note, headers))
        sock.recv(65536)
    return _request(
        port, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": _ECHO}, headers
    )


@dataclass
class Run:
    latencies: list[float]
    seconds: float
    errors: int
    server_cpu: float = 0.0
    client_cpu: float = 0.0


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _load(
    port: int,
    request: bytes,
    seconds: float | None,
    total: int | None,
    on_count: Any = None,
    connections: int = CONNECTIONS,
    pid: int | None = None,
) -> Run:
    latencies: list[float] = []
    errors = 0
    done = 0
    server_started = 0.0 if pid is None else _cpu_seconds(pid)
    client_started = time.process_time()
    started = time.perf_counter()
    deadline = started + (seconds or 1e9)

    async def connection() -> None:
        nonlocal errors, done
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            while time.perf_counter() < deadline and (total is None or done < total):
                sent = time.perf_counter()
                writer.write(request)
                status, _, body = await _response(reader)
                latencies.append(time.perf_counter() - sent)
                done += 1
                if status != 200 or b'"result"' not in body or b'"isError":true' in body:
                    errors += 1
                if on_count is not None:
                    on_count(done)
        finally:
            writer.close()

    await asyncio.gather(*(connection() for _ in range(connections)))
    elapsed = time.perf_counter() - started
    server = 0.0 if pid is None else _cpu_seconds(pid) - server_started
    return Run(latencies, elapsed, errors, server, time.process_time() - client_started)


def _summary(runs: list[Run]) -> Load:
    """The rounds of one server as one load: their requests over their summed time."""
    latencies = sorted(t for run in runs for t in run.latencies)
    n, elapsed = len(latencies), sum(run.seconds for run in runs)
    return Load(
        n,
        round(elapsed, 2),
        round(n / elapsed, 1),
        round(latencies[n // 2] * 1e3, 2),
        round(latencies[min(n - 1, n * 99 // 100)] * 1e3, 2),
        sum(run.errors for run in runs),
        round(sum(run.server_cpu for run in runs) / n * 1e6, 1),
        round(sum(run.client_cpu for run in runs) / n * 1e6, 1),
    )


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return -1


def uvicorn_command(
    target: list[str], port: str, http: str = HTTP, loop: str = "auto"
) -> list[str]:
    """One uvicorn worker serving ``target`` on 127.0.0.1:``port``, quietly."""
    command = [sys.executable, "-m", "uvicorn", *target, "--host", "127.0.0.1", "--port", port]
    command += ["--workers", "1", "--http", http, "--loop", loop]
    return [*command, "--log-level", "warning", "--no-access-log"]


class Server:
    """One uvicorn worker on a free loopback port, stopped on exit, its HTTP
    parser named (uvicorn's ``auto`` picks whichever is installed, which would
    change both servers' cost per request between machines). The default is
    httptools, the parser of ``uvicorn[standard]`` that production servers
    run (the bench group pins it); under h11 its per-request floor is about
    as large as this package's whole endpoint."""

    def __init__(self, target: list[str], http: str = HTTP) -> None:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        command = uvicorn_command(target, str(self.port), http)
        self.process = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.DEVNULL)

    def __enter__(self) -> Server:
        try:
            self._listening()
        except BaseException:  # not entered, so no __exit__ will stop it
            self.__exit__()
            raise
        return self

    def _listening(self) -> None:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.1).close()
                return
            except OSError:
                if self.process.poll() is not None:
                    raise RuntimeError(f"server exited: {self.process.returncode}") from None
                time.sleep(0.05)
        raise RuntimeError("server did not start")

    def __exit__(self, *exc: object) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:  # deaf to SIGTERM: it must not outlive the bench
            self.process.kill()
            self.process.wait(10)


def measure(
    seconds: float, memory_requests: int, rounds: int = ROUNDS, http: str = HTTP
) -> dict[str, Any]:
    """Every server in every era for ``seconds``, in alternating rounds (the machine's
    load changes under both alike); then our server's RSS over ``memory_requests``."""
    loads: dict[str, dict[str, Load]] = {}
    memory: dict[str, int] = {}
    with contextlib.ExitStack() as stack:
        servers = {
            name: stack.enter_context(Server(target, http)) for name, target in SERVERS.items()
        }
        for era in ("2026-07-28", "2025-11-25"):
            requests = {name: era_requests(era, s.port) for name, s in servers.items()}
            runs: dict[str, list[Run]] = {name: [] for name in servers}
            for name, server in servers.items():
                asyncio.run(_load(server.port, requests[name], 0.5, None))  # warm up
            for _ in range(rounds):
                for name, server in servers.items():
                    pid = server.process.pid
                    load = _load(server.port, requests[name], seconds / rounds, None, pid=pid)
                    runs[name].append(asyncio.run(load))
            loads[era] = {name: _summary(r) for name, r in runs.items()}
        ours = servers["mcp-schema"]
        if memory_requests:
            request = era_requests("2026-07-28", ours.port)
            memory["start"] = _rss_kib(ours.process.pid)

            def sample(done: int) -> None:
                if done == memory_requests // 2:
                    memory["middle"] = _rss_kib(ours.process.pid)

            asyncio.run(_load(ours.port, request, None, memory_requests, sample))
            memory["end"] = _rss_kib(ours.process.pid)
    return {
        "loads": loads,
        "rss_kib": memory,
        "connections": CONNECTIONS,
        "rounds": rounds,
        "memory_requests": memory_requests,
        "http": http,
    }


def targets(result: dict[str, Any]) -> list[tuple[str, str, str, bool]]:
    """(name, measured, goal, passed) of each era: the fields of ``bench.__main__.Target``."""
    found = []
    for era, by in result["loads"].items():
        ours, ref = by["mcp-schema"], by["official mcp"]
        rps = ours.rps / ref.rps if ref.rps else 0.0
        p99 = ours.p99_ms / ref.p99_ms if ref.p99_ms else float("inf")
        name = f"HTTP {era} tools/call"
        found.append(
            (
                f"{name} req/s over official",
                f"{rps:.2f}x",
                f">= {RPS_TARGET:.1f}x",
                rps >= RPS_TARGET,
            )
        )
        found.append(
            (f"{name} p99 over official", f"{p99:.2f}x", f"<= {P99_TARGET:.2f}x", p99 <= P99_TARGET)
        )
    return found


def report(result: dict[str, Any]) -> None:
    print(
        f"\nStreamable HTTP, tools/call echo, one uvicorn worker ({result['http']}),"
        f" {result['connections']} connections"
    )
    print(
        f"  {'era':<12} {'server':<12} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7}"
        f" {'server CPU us/req':>18} {'client CPU us/req':>18}"
    )
    for era, by in result["loads"].items():
        for name, load in by.items():
            print(
                f"  {era:<12} {name:<12} {load.rps:>9,.0f} {load.p50_ms:>8.2f} {load.p99_ms:>8.2f} {load.errors:>7}"
                f" {load.server_us:>18,.0f} {load.client_us:>18,.0f}"
            )
    for era, by in result["loads"].items():
        ours, ref = by["mcp-schema"], by["official mcp"]
        if ours.server_us:
            print(
                f"  {era}: the official server spends {ref.server_us / ours.server_us:.2f}x"
                " our server's CPU per request"
            )
    rss = result["rss_kib"]
    if rss:
        shown = ", ".join(f"{k} {v / 1024:.1f} MiB" for k, v in rss.items())
        print(f"  mcp-schema RSS over {result['memory_requests']:,} requests: {shown}")


def jsonable(result: dict[str, Any]) -> dict[str, Any]:
    loads = {
        era: {n: asdict(load) for n, load in by.items()} for era, by in result["loads"].items()
    }
    return {**result, "loads": loads}


def settings(quick: bool, seconds: float = 5.0) -> tuple[float, int]:
    """Seconds per server and era, and requests of the memory run (none when quick)."""
    return (2.0, 0) if quick else (seconds, MEMORY_REQUESTS)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.http", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="shorter runs, no memory run")
    parser.add_argument("--seconds", type=float, default=5.0, help="per server and era")
    parser.add_argument(
        "--http",
        default=HTTP,
        help="uvicorn's --http for both servers (httptools, the default, or h11)",
    )
    args = parser.parse_args(argv)
    result = measure(*settings(args.quick, args.seconds), http=args.http)
    report(result)
    for name, measured, goal, passed in targets(result):
        print(f"  {'PASS' if passed else 'MISS'}  {name:<48} {measured}  (target {goal})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
