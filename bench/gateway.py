"""The gateway's cost: ``python -m bench.gateway [--quick] [--seconds S]``.

``examples/http_server.py`` under one uvicorn worker takes ``tools/call
echo`` (2026-07-28, JSON answers) from the load client of ``bench.http``
(``CONNECTIONS`` keep-alive connections), directly and through each hop,
the hops alternating in ``ROUNDS`` rounds so the machine's load falls on
all alike: ``python -m mcp_schema gateway`` in monitor mode and in enforce
mode, the bare forwarder of ``bench.gateway_reference`` (uvicorn + httpx,
validating nothing: the gateway's stack without its work, the reference),
and nginx as a plain reverse proxy (``proxy_pass``, the floor of what a
proxy adds), each one process on loopback. Reported: the p50 and p99
latency one request at a time and what each hop adds to them over the
direct path, the requests per second with ``CONNECTIONS`` at once, and
the CPU time each process spends per request then (on a shared machine the
steadiest of the numbers: the hops' CPU beside the forwarder's). The
targets (printed PASS or MISS, never asserted): monitor mode adds at most
1.3x the forwarder's p50 and serves at least 80% of its requests per
second; enforce mode 1.5x and 70%.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Coroutine, Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench.http import CONNECTIONS, ROOT, Load, Run, Server, _load, _summary, era_requests

ROUNDS = 5
TARGETS = {"gateway monitor": (1.3, 0.8), "gateway enforce": (1.5, 0.7)}
"""Each mode's bounds: its added p50 over the forwarder's, its req/s under the forwarder's."""
REFERENCE = "bare forwarder"

NGINX = """\
worker_processes 1;
master_process off;  # one process, whose CPU time is the proxy's
daemon off;
pid {work}/nginx.pid;
error_log {work}/error.log warn;
{user}
events {{ worker_connections 1024; }}
http {{
    access_log off;
    keepalive_requests 100000000;  # 1000 by default: the load client does not reconnect
    client_body_temp_path {work}/body;
    proxy_temp_path {work}/proxy;
    fastcgi_temp_path {work}/fastcgi;
    uwsgi_temp_path {work}/uwsgi;
    scgi_temp_path {work}/scgi;
    upstream mcp {{ server {upstream}; keepalive 64; keepalive_requests 100000000; }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://mcp;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host {host};
            proxy_buffering off;
        }}
    }}
}}
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Hop(Server):
    """One process in front of the upstream, on a free port, stopped on exit."""

    def __init__(self, command: list[str], env: dict[str, str] | None = None) -> None:
        self.port = _free_port()
        argv = [part.replace("{port}", str(self.port)) for part in command]
        self.process = subprocess.Popen(argv, cwd=ROOT, stderr=subprocess.DEVNULL, env=env)


@contextlib.contextmanager
def hops(upstream: int, work: Path) -> Iterator[dict[str, Server]]:
    """Every hop in front of the upstream on port ``upstream``."""
    url = f"http://127.0.0.1:{upstream}/mcp"
    gateway = [sys.executable, "-m", "mcp_schema", "gateway", "--listen", "127.0.0.1:{port}"]
    uvicorn = [sys.executable, "-m", "uvicorn", "bench.gateway_reference:app", "--host"]
    uvicorn += ["127.0.0.1", "--port", "{port}", "--log-level", "warning", "--no-access-log"]
    commands: dict[str, tuple[list[str], dict[str, str] | None]] = {
        REFERENCE: (uvicorn, {**os.environ, "BENCH_UPSTREAM": url}),
        "gateway monitor": ([*gateway, "--upstream", url], None),
        "gateway enforce": ([*gateway, "--upstream", url, "--enforce"], None),
    }
    with contextlib.ExitStack() as stack:
        found: dict[str, Server] = {
            name: stack.enter_context(Hop(command, env))
            for name, (command, env) in commands.items()
        }
        # The upstream's own Host, as the forwarders send it.
        proxy = nginx(upstream, work, f"127.0.0.1:{upstream}")
        if proxy is not None:
            found["nginx proxy_pass"] = stack.enter_context(proxy)
        yield found


def nginx(upstream: int, work: Path, host: str, prefix: Sequence[str] = ()) -> Hop | None:
    """nginx as one process in front of the upstream on port ``upstream``, its
    files in ``work``, sending ``host`` as ``Host`` (``$http_host``: the
    client's), started by ``prefix`` (``taskset -c N``); None without nginx."""
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.access(binary, os.X_OK):
        return None
    port = _free_port()
    user = "user root;" if os.geteuid() == 0 else ""
    config = work / "nginx.conf"
    config.write_text(
        NGINX.format(work=work, user=user, upstream=f"127.0.0.1:{upstream}", port=port, host=host)
    )
    hop = Hop([*prefix, binary, "-p", str(work), "-c", str(config), "-e", str(work / "error.log")])
    hop.port = port
    return hop


def measure(seconds: float, rounds: int = ROUNDS) -> dict[str, Any]:
    """Each path for ``seconds`` in all, in alternating rounds: half of it one
    connection at a time (the latency a hop adds, unloaded), half with
    ``CONNECTIONS`` at once (the requests per second it serves)."""
    with contextlib.ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-gateway-")))
        upstream = stack.enter_context(
            Server(["--app-dir", str(ROOT / "examples"), "http_server:app"])
        )
        paths: dict[str, Server] = {
            "direct": upstream,
            **stack.enter_context(hops(upstream.port, work)),
        }
        requests = {name: era_requests("2026-07-28", s.port) for name, s in paths.items()}
        alone: dict[str, list[Run]] = {name: [] for name in paths}
        loaded: dict[str, list[Run]] = {name: [] for name in paths}
        share = seconds / rounds / 2
        for name, server in paths.items():
            asyncio.run(_load(server.port, requests[name], 0.5, None))  # warm up
        for _ in range(rounds):
            for name, server in paths.items():
                run = _load(server.port, requests[name], share, None, connections=1)
                alone[name].append(_ran(name, run))
                run = _load(server.port, requests[name], share, None, pid=server.process.pid)
                loaded[name].append(_ran(name, run))
    return {
        "alone": {name: _summary(r) for name, r in alone.items()},
        "loads": {name: _summary(r) for name, r in loaded.items()},
        "connections": CONNECTIONS,
        "rounds": rounds,
    }


def _ran(name: str, load: Coroutine[Any, Any, Run]) -> Run:
    """The run of ``load`` on path ``name``; a connection the path broke names it."""
    try:
        return asyncio.run(load)
    except (OSError, asyncio.IncompleteReadError) as exc:
        raise RuntimeError(f"{name}: the load client's connection broke: {exc!r}") from exc


def added(loads: dict[str, Load], name: str) -> float:
    """The p50 a hop adds over the direct path, in ms."""
    return loads[name].p50_ms - loads["direct"].p50_ms


def targets(result: dict[str, Any]) -> list[tuple[str, str, str, bool]]:
    """(name, measured, goal, passed) of each mode: the fields of ``bench.__main__.Target``."""
    alone: dict[str, Load] = result["alone"]
    loads: dict[str, Load] = result["loads"]
    reference = added(alone, REFERENCE)
    found = []
    for name, (latency, rate) in TARGETS.items():
        over = added(alone, name) / reference if reference > 0 else float("inf")
        share = loads[name].rps / loads[REFERENCE].rps if loads[REFERENCE].rps else 0.0
        found.append(
            (
                f"{name} added p50 over the forwarder's",
                f"{over:.2f}x",
                f"<= {latency:.1f}x",
                over <= latency,
            )
        )
        found.append(
            (
                f"{name} req/s over the forwarder's",
                f"{share:.2f}x",
                f">= {rate:.1f}x",
                share >= rate,
            )
        )
    return found


def report(result: dict[str, Any]) -> None:
    alone: dict[str, Load] = result["alone"]
    loads: dict[str, Load] = result["loads"]
    print(
        "\nThe gateway, tools/call echo (2026-07-28) to examples/http_server.py: latency one "
        f"connection at a time, req/s with {result['connections']} connections"
    )
    print(
        f"  {'path':<18} {'p50 ms':>8} {'p99 ms':>8} {'+p50 ms':>8} {'+p99 ms':>8} {'req/s':>9}"
        f" {'cpu us/req':>10} {'errors':>7}"
    )
    for name, load in alone.items():
        more = "" if name == "direct" else f"{added(alone, name):>8.3f}"
        more99 = "" if name == "direct" else f"{load.p99_ms - alone['direct'].p99_ms:>8.3f}"
        errors = load.errors + loads[name].errors
        print(
            f"  {name:<18} {load.p50_ms:>8.3f} {load.p99_ms:>8.3f} {more:>8} {more99:>8} "
            f"{loads[name].rps:>9,.0f} {loads[name].server_us:>10,.0f} {errors:>7}"
        )


def jsonable(result: dict[str, Any]) -> dict[str, Any]:
    return {
        **result,
        "alone": {n: asdict(load) for n, load in result["alone"].items()},
        "loads": {n: asdict(load) for n, load in result["loads"].items()},
    }


def settings(quick: bool, seconds: float = 5.0) -> float:
    """Seconds per path."""
    return 2.0 if quick else seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.gateway", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="shorter runs")
    parser.add_argument("--seconds", type=float, default=5.0, help="per path")
    args = parser.parse_args(argv)
    result = measure(settings(args.quick, args.seconds))
    report(result)
    for name, measured, goal, passed in targets(result):
        print(f"  {'PASS' if passed else 'MISS'}  {name:<48} {measured}  (target {goal})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
