"""The server's own cost per request, without a network or an HTTP parser:
``python -m bench.inprocess [APP ...] [--requests N] [--rounds R]``.

Each app of ``APPS`` gets the stateless 2026-07-28 ``tools/call echo`` of
``bench.http`` (its ``_meta`` and ``Mcp-*`` headers, answered in JSON) as
one ASGI request after another, in this process, after its lifespan's
startup, the way uvicorn hands them over (``http.disconnect`` once the
answer is sent). Reported: the CPU time per request (the median of
``--rounds`` rounds, the apps alternating), and each app's ratio to the
minimal app. On a machine shared with other work CPU time still moves;
instruction counts do not: ``--callgrind`` runs each app under valgrind's
callgrind, counting the instructions of the request loop alone (``--requests``
over ten; the start-up, imports and warm-up not counted).

The gateway rows (``gateway-monitor``, ``gateway-enforce``) are the app
``python -m mcp_schema gateway --upstream URL [--enforce]`` runs (built by
its command line, the upstream probed once as at its start), in this
process, in front of ``examples/http_server.py`` without Redis served by a
real uvicorn worker in a child process on loopback: what is counted
(CPU time, instructions) is the gateway's own, its upstream client's
socket I/O included, never the upstream's. The upstream's CPU per request
under uvicorn is read from its process meanwhile, and each gateway row
prints the req/s ratio issue 31 sets a target for, by CPU per request: the
gateway and the upstream sharing one core against the upstream alone
(``upstream / (gateway + upstream)``; the HTTP server in front of the
gateway, uvicorn's own cost, left out). ``--core N`` runs this process and the
upstream on core N alone, as ``bench.front`` runs the gateway and its upstream
(on two cores each wake-up of the other process costs more). ``--loop``: the
event loop of this process (``auto``, the default: uvloop where it is
installed, as uvicorn's own default picks for the gateway; the upstream runs
on uvicorn's default).

The telemetry rows of ``bench.telemetry`` (``off``, ``api``, ``sdk``) can be
named too. ``sdk`` sets the global OpenTelemetry providers when it loads, which
would turn on what ``api`` and ``off`` measure without: in the CPU-time mode it
runs in a child process of its own (`Isolated`), told each round's requests
in turn, so the rounds still alternate.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import importlib
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

from bench.http import Server, _cpu_seconds, stateless_call

ROOT = Path(__file__).resolve().parent.parent
APPS = {
    "bare": "bench.front_apps:bare",
    "minimal": "bench.front_apps:minimal",
    "example": "http_server:app",
    "official": "bench.http_reference:app",
    "off": "bench.telemetry_apps:off",
    "api": "bench.telemetry_apps:api",
    "sdk": "bench.telemetry_apps:sdk",
}
ISOLATED = frozenset({"sdk"})
"""Apps that change the process when they load (global providers): measured in a child."""
GATEWAYS = {"gateway-monitor": [], "gateway-enforce": ["--enforce"]}
"""The gateway rows: the flags of ``python -m mcp_schema gateway`` besides ``--upstream``."""
UPSTREAM = ["--app-dir", str(ROOT / "examples"), "http_server:app"]
NAMES = [*APPS, *GATEWAYS]
REQUESTS = 2000
ROUNDS = 5
App = Callable[..., Awaitable[None]]


def use_loop(name: str) -> str:
    """Run this process's event loops on ``name`` (``auto``: uvloop where it is
    installed, else asyncio's); the one chosen."""
    if name == "auto":
        name = "uvloop" if importlib.util.find_spec("uvloop") else "asyncio"
    if name == "uvloop":
        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    return name


def load(name: str, upstream: str | None = None) -> App:
    """The ASGI app ``name`` of `APPS` (the example without Redis), or the gateway
    of `GATEWAYS` in front of the URL ``upstream`` (built outside an event loop:
    its probe runs one of its own)."""
    os.environ.pop("MCP_REDIS_URL", None)
    if name in GATEWAYS:
        assert upstream is not None
        return gateway(upstream, GATEWAYS[name])
    sys.path.insert(0, str(ROOT / "examples"))
    module, _, attribute = APPS[name].partition(":")
    app: App = getattr(importlib.import_module(module), attribute)
    return app


def gateway(upstream: str, flags: list[str]) -> App:
    """The app ``python -m mcp_schema gateway --upstream URL FLAGS`` serves, as its
    command line builds it (`mcp_schema.gateway.command.app_of`); a finding it
    reports fails the run (the traffic is valid)."""
    from mcp_schema.gateway.command import add_arguments, app_of
    from mcp_schema.proxy.reports import Report, ReportLog

    class Findings(ReportLog):
        def add(self, report: Report) -> None:
            raise RuntimeError(f"the gateway reported {report}")

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(["--listen", "127.0.0.1:0", "--upstream", upstream, *flags])
    app: App = app_of(args, Findings())
    return app


@contextlib.contextmanager
def upstream_of(names: list[str]) -> Iterator[Server | None]:
    """The gateway rows' upstream, listening (None when no gateway row is asked for)."""
    if not any(name in GATEWAYS for name in names):
        yield None
        return
    os.environ.pop("MCP_REDIS_URL", None)  # the example alone, as bench.front runs it
    with Server(UPSTREAM) as server:
        yield server


def _url(server: Server | None) -> str | None:
    return None if server is None else f"http://127.0.0.1:{server.port}/mcp"


def scope_and_body() -> tuple[dict[str, Any], bytes]:
    body, mcp_headers = stateless_call()
    data = json.dumps(body, separators=(",", ":")).encode()
    headers = {
        "host": "127.0.0.1:8000",
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "content-length": str(len(data)),
        **{k.lower(): v for k, v in mcp_headers.items()},
    }
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": [(k.encode(), v.encode()) for k, v in headers.items()],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }
    return scope, data


async def one(app: App, scope: dict[str, Any], data: bytes) -> bytes:
    """One request through ``app``: its answer's body (checked to be a JSON result)."""
    answered = asyncio.Event()
    sent: list[bytes] = []
    status: list[int] = []
    first = True

    async def receive() -> dict[str, Any]:
        nonlocal first
        if first:
            first = False
            return {"type": "http.request", "body": data, "more_body": False}
        await answered.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            status.append(message["status"])
        elif message["type"] == "http.response.body":
            sent.append(message.get("body", b""))
            if not message.get("more_body", False):
                answered.set()

    await app(scope, receive, send)
    body = b"".join(sent)
    if status != [200] or b'"result"' not in body or b'"isError":true' in body:
        raise RuntimeError(f"not a JSON result: {status} {body[:200]!r}")
    return body


class Lifespan:
    """The app's lifespan, started and (on exit) stopped, as an ASGI server runs it."""

    def __init__(self, app: App) -> None:
        self.app = app
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def __aenter__(self) -> Lifespan:
        async def send(message: dict[str, Any]) -> None:
            await self.outbox.put(message)

        scope = {"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}
        self.task = asyncio.ensure_future(self.app(scope, self.inbox.get, send))
        await self.inbox.put({"type": "lifespan.startup"})
        said = await asyncio.wait_for(self._said(), 30)
        if said is not None and said["type"] != "lifespan.startup.complete":
            raise RuntimeError(f"the lifespan's startup failed: {said}")
        return self

    async def _said(self) -> dict[str, Any] | None:
        getting = asyncio.ensure_future(self.outbox.get())
        done, _ = await asyncio.wait({getting, self.task}, return_when=asyncio.FIRST_COMPLETED)
        if getting in done:
            return getting.result()
        getting.cancel()
        return None  # the app takes no lifespan

    async def __aexit__(self, *exc: object) -> None:
        if not self.task.done():
            await self.inbox.put({"type": "lifespan.shutdown"})
            await asyncio.wait_for(self.task, 30)


class Isolated:
    """An app of `ISOLATED` run in a child process (``--serve``) on the event
    loop ``loop``: started and warmed up there, then asked for one round at a time."""

    def __init__(self, name: str, loop: str) -> None:
        command = [sys.executable, "-m", "bench.inprocess", name, "--serve", "--loop", loop]
        self.child = subprocess.Popen(
            command, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        self._said()  # started and warmed up

    def _said(self) -> str:
        assert self.child.stdout is not None
        line = self.child.stdout.readline()
        if not line:
            raise RuntimeError(f"the child {self.child.args} stopped: {self.child.wait(30)}")
        return line

    def round(self, requests: int) -> float:
        """CPU seconds per request of one round of ``requests`` requests."""
        assert self.child.stdin is not None
        self.child.stdin.write(f"{requests}\n")
        self.child.stdin.flush()
        return float(self._said())

    def close(self) -> None:
        assert self.child.stdin is not None
        self.child.stdin.close()
        self.child.wait(30)


async def _round(app: App, scope: dict[str, Any], data: bytes, requests: int) -> float:
    started = time.process_time()
    for _ in range(requests):
        await one(app, scope, data)
    return (time.process_time() - started) / requests


async def serve_rounds(name: str) -> None:
    """The child's side of `Isolated`: ``name`` started and warmed up, "ready"
    said, then a round for each number of requests read from stdin."""
    scope, data = scope_and_body()
    app = load(name)
    async with Lifespan(app):
        for _ in range(50):
            await one(app, scope, data)
        print("ready", flush=True)
        for line in sys.stdin:
            print(await _round(app, scope, data, int(line)), flush=True)


async def rounds(
    apps: dict[str, App | Isolated], requests: int, count: int, upstream: int | None = None
) -> dict[str, list[float]]:
    """CPU seconds per request of each app in each of ``count`` rounds of ``requests``
    requests, the apps alternating; each app started once (some start only once a process).
    With the pid of the gateways' ``upstream``, also the upstream's CPU seconds per request
    of each gateway row (as ``"NAME upstream"``)."""
    scope, data = scope_and_body()
    runs: dict[str, list[float]] = {name: [] for name in apps}
    async with contextlib.AsyncExitStack() as stack:
        for app in apps.values():
            if isinstance(app, Isolated):
                stack.callback(app.close)
                continue
            await stack.enter_async_context(Lifespan(app))
            for _ in range(50):  # warm-up: lazy builds, caches
                await one(app, scope, data)
        for _ in range(count):
            for name, app in apps.items():
                if isinstance(app, Isolated):
                    runs[name].append(app.round(requests))
                    continue
                upstream_cpu = 0.0
                if upstream is not None and name in GATEWAYS:
                    upstream_cpu = _cpu_seconds(upstream)
                runs[name].append(await _round(app, scope, data, requests))
                if upstream is not None and name in GATEWAYS:
                    spent = _cpu_seconds(upstream) - upstream_cpu
                    runs.setdefault(f"{name} upstream", []).append(spent / requests)
    return runs


def cpu(names: list[str], requests: int, count: int, loop: str) -> dict[str, float]:
    """Median CPU microseconds per request of each app (see `rounds`)."""
    with upstream_of(names) as upstream:
        apps: dict[str, App | Isolated] = {
            name: Isolated(name, loop) if name in ISOLATED else load(name, _url(upstream))
            for name in names
        }
        pid = None if upstream is None else upstream.process.pid
        runs = asyncio.run(rounds(apps, requests, count, pid))
    return {name: round(statistics.median(r) * 1e6, 1) for name, r in runs.items()}


def counted(name: str, requests: int, upstream: str | None = None) -> None:
    """``requests`` requests through the app ``name`` (a gateway: in front of the
    URL ``upstream``), started and warmed up first: the loop alone runs inside
    ``functools.reduce``, the C function whose instructions callgrind is told to
    count (`instructions`)."""
    scope, data = scope_and_body()
    app = load(name, upstream)
    loop = asyncio.new_event_loop()
    stack = contextlib.AsyncExitStack()

    async def start() -> None:
        await stack.enter_async_context(Lifespan(app))
        for _ in range(50):
            await one(app, scope, data)

    async def measured() -> None:
        for _ in range(requests):
            await one(app, scope, data)

    loop.run_until_complete(start())
    functools.reduce(lambda _, __: loop.run_until_complete(measured()), [0], None)
    loop.run_until_complete(stack.aclose())
    loop.close()


def _instructions(name: str, requests: int, work: Path, upstream: str | None, loop: str) -> int:
    out = work / f"{name}.out"
    command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
    command += ["--collect-atstart=no", "--toggle-collect=functools_reduce"]
    command += [sys.executable, "-m", "bench.inprocess", name, "--requests", str(requests)]
    command += ["--loop", loop]
    if name in GATEWAYS and upstream is not None:  # the upstream runs outside valgrind
        command += ["--upstream", upstream]
    subprocess.run([*command, "--counted"], cwd=ROOT, check=True, capture_output=True)
    summary = re.search(rb"^(?:summary|totals): (\d+)", out.read_bytes(), re.M)
    if summary is None:
        raise RuntimeError(f"no totals in {out}")
    return int(summary.group(1))


def instructions(names: list[str], requests: int, loop: str) -> dict[str, float]:
    """Instructions per request of each app, by callgrind (see the module)."""
    with tempfile.TemporaryDirectory(prefix="bench-inprocess-") as work:
        with upstream_of(names) as upstream:
            url = _url(upstream)
            return {
                name: _instructions(name, requests, Path(work), url, loop) / requests
                for name in names
            }


# What each app's cost says of the req/s targets of issue 31 (the front door) and
# issue 36 (telemetry): (whose req/s over whose, bound).
COMPARED = {
    "bare": ("minimal / bare", 0.50),
    "official": ("minimal / official", 3.5),
    "example": ("example / minimal", 0.85),
    "api": ("api / off", 0.98),
    "sdk": ("sdk / off", 0.90),
}
_BASES = {"bare": "minimal", "official": "minimal", "example": "minimal"}
_BASES.update(api="off", sdk="off")


# Each gateway row's target: its req/s over the upstream's alone, sharing one core.
GATEWAY_TARGETS = {"gateway-monitor": 0.50, "gateway-enforce": 0.45}


def _ratios(figures: dict[str, float], unit: str) -> None:
    """Each app's cost, and the req/s ratio it would give with the core to itself
    (the HTTP server's own cost left out: in-process, the bare app costs almost nothing);
    a gateway's beside its upstream's CPU (under uvicorn), where it was measured."""
    for name, value in figures.items():
        if name.endswith(" upstream"):
            continue
        shown = f"  {name:<16} {value:>14,.1f} {unit}"
        base = figures.get(_BASES.get(name, ""))
        if base and name in COMPARED:
            what, bound = COMPARED[name]
            side = value / base if name in ("bare", "official") else base / value
            shown += f"   {what}: {side:.2f} (req/s target {bound})"
        upstream = figures.get(f"{name} upstream")
        if upstream:
            share = upstream / (upstream + value)
            shown += f"   upstream {upstream:,.1f}: gateway / direct {share:.2f}"
            shown += f" (req/s target {GATEWAY_TARGETS[name]})"
        print(shown)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.inprocess", description=__doc__)
    parser.add_argument("apps", nargs="*", help=f"of {', '.join(NAMES)} (default: all)")
    parser.add_argument("--requests", type=int, default=REQUESTS, help="per round")
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--callgrind", action="store_true", help="instructions per request")
    parser.add_argument("--counted", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--upstream", help=argparse.SUPPRESS)  # a counted gateway's
    parser.add_argument("--core", type=int, help="run here and the upstream on this core alone")
    parser.add_argument("--loop", choices=["auto", "asyncio", "uvloop"], default="auto")
    args = parser.parse_args(argv)
    loop = use_loop(args.loop)
    if args.core is not None:  # the upstream (a child) inherits it
        os.sched_setaffinity(0, {args.core})
    if unknown := [name for name in args.apps if name not in NAMES]:
        parser.error(f"no app named {', '.join(unknown)}")
    args.apps = args.apps or NAMES
    if args.serve:  # an isolated app's rounds, asked for on stdin (`Isolated`)
        asyncio.run(serve_rounds(args.apps[0]))
        return 0
    if args.counted:  # one loop, nothing printed: what --callgrind counts
        counted(args.apps[0], args.requests, args.upstream)
        return 0
    if args.callgrind:
        counts = instructions(args.apps, args.requests // 10 or 1, loop)
        _ratios(counts, f"instructions/request ({loop})")
    else:
        _ratios(cpu(args.apps, args.requests, args.rounds, loop), f"CPU us/request ({loop})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
