"""The front doors at their server's limit: ``python -m bench.front [--quick]``.

Every server here takes the stateless 2026-07-28 ``tools/call echo`` of
``bench.http`` (its ``_meta`` and ``Mcp-*`` headers, answered in JSON) from
wrk: one thread, ``CONNECTIONS`` keep-alive connections, a Lua script for the
POST, pinned to core ``LOAD_CORE``. Everything it loads runs pinned to the
other core, ``SERVER_CORE``, so the load generator never takes the server's
CPU (the machine has two cores), both ahead of the machine's other work
(``NICE``: on a shared machine, others' tests would take most of a core). Each server is one uvicorn worker
(httptools; uvloop where it is installed, else asyncio, as uvicorn's own
default picks).

Rows, in alternating rounds (each round runs every row once, in a rotating
order, so the machine's drift falls on all alike); every figure is the
median over the rounds of one run:

* the bare ASGI app and the minimal `Endpoint` app of ``bench.front_apps``,
  and that app with a `ResourceServer` (``authorized app``: each request
  with the next of 1,000 RS256-2048 JWT access tokens, ``bench.front_tokens``;
  its cache of verified tokens holds them all after the warm-up, as it would
  for a thousand clients sending theirs again and again),
  the official SDK server (``bench.http_reference``) and
  ``examples/http_server.py`` without Redis (``example (direct)``);
* in front of that example, sharing its core: ``python -m mcp_schema
  gateway`` in monitor and in enforce mode, and nginx as the reference proxy
  (``$http_host``, HTTP/1.1 keep-alive to the upstream).

Beside each row's req/s, p50 and p99: the CPU time per request of the
processes on the server core and of wrk, and the shares of the server core
they and the rest of the machine took. The targets of issue 31, item 9, print
as PASS or MISS (never asserted), each req/s ratio also as the ratio of CPU
per request: what the req/s would give with the core to this bench alone,
steadier when other work shares the machine.
Standalone, the run is recorded under ``"front"`` in ``bench/results.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from bench import front_tokens
from bench.gateway import Hop, nginx
from bench.http import (
    HTTP,
    ROOT,
    Server,
    _cpu_seconds,
    _request,
    _response,
    stateless_call,
    uvicorn_command,
)

LOAD_CORE, SERVER_CORE = "0", "1"
CONNECTIONS = 8
ROUNDS = 5
SECONDS = 3  # wrk takes whole seconds
WARM_UP = 1
NICE = -10  # against one default-priority group on its core, about 90% of the core
LOOP = "uvloop" if importlib.util.find_spec("uvloop") else "asyncio"
RESULTS = ROOT / "bench" / "results.json"
EXAMPLE = ["--app-dir", str(ROOT / "examples"), "http_server:app"]
SERVERS = {
    "bare app": ["bench.front_apps:bare"],
    "minimal app": ["bench.front_apps:minimal"],
    "authorized app": ["bench.front_apps:authorized"],  # minimal, taking bearer tokens
    "official server": ["bench.http_reference:app"],
    "example (direct)": EXAMPLE,  # a server row, and the gateway rows' upstream alone
}
# (name, numerator row, denominator row, what is compared, bound, whether at least)
TARGETS = [
    ("minimal / bare req/s", "minimal app", "bare app", "rps", 0.50, True),
    ("minimal / official req/s", "minimal app", "official server", "rps", 3.5, True),
    ("minimal p99 / official p99", "minimal app", "official server", "p99_ms", 1 / 3, False),
    ("example / minimal req/s", "example (direct)", "minimal app", "rps", 0.85, True),
    ("authorized / minimal req/s", "authorized app", "minimal app", "rps", 0.80, True),
    ("gateway monitor / direct req/s", "gateway monitor", "example (direct)", "rps", 0.50, True),
    ("gateway enforce / direct req/s", "gateway enforce", "example (direct)", "rps", 0.45, True),
    ("nginx / direct req/s (reference)", "nginx", "example (direct)", "rps", 0.0, True),
]

# wrk's own output is human-readable only: done() prints one line to parse.
WRK_SCRIPT = """\
wrk.method = "POST"
wrk.body = [==[{body}]==]
{headers}
{tokens}
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("BENCH %d %d %.1f %.1f %d %d\\n", summary.requests,
    summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.timeout, e.status))
end
"""


@dataclass
class Sample:
    """One wrk run against one row."""

    rps: float
    p50_ms: float
    p99_ms: float
    errors: int
    """Socket errors and timeouts, and answers other than 2xx or 3xx."""
    server_us: float
    """CPU time per request of the processes on the server core (for a hop: it and the upstream)."""
    load_us: float
    """wrk's CPU time per request: far under the server's, or wrk is the limit."""
    ours: float
    """The share of the server core its processes used: near 1, the server was the limit."""
    others: float
    """The share of the server core that other work of the machine took meanwhile: this
    bench shares the machine, so its absolute numbers fall with it (CPU per request less)."""


@dataclass
class Row(Sample):
    """One row's medians over the rounds (its errors summed), and the rounds themselves."""

    rounds: list[Sample]


def missing() -> list[str]:
    """The Debian packages this bench needs and the machine lacks."""
    return [tool for tool in ("wrk", "nginx", "taskset") if shutil.which(tool) is None]


# Each request names the next token of the rotation (``bench.front_tokens``).
ROTATION = """\
tokens = {{{tokens}}}
local turn = 0
function request()
  turn = turn % #tokens + 1
  wrk.headers["Authorization"] = "Bearer " .. tokens[turn]
  return wrk.format()
end
"""


def wrk_script(work: Path, tokens: list[str] | None = None) -> Path:
    """The Lua script sending ``bench.http``'s stateless call (wrk adds ``Host``
    with the port, as the official server requires, and ``Content-Length``);
    with ``tokens``, one of them in each request's ``Authorization``, in turn."""
    body, mcp_headers = stateless_call()
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        **mcp_headers,
    }
    lines = "\n".join(f'wrk.headers["{k}"] = "{v}"' for k, v in headers.items())
    script = work / ("authorized.lua" if tokens else "call.lua")
    data = json.dumps(body, separators=(",", ":"))
    rotation = ROTATION.format(tokens=",".join(f'"{t}"' for t in tokens)) if tokens else ""
    script.write_text(WRK_SCRIPT.format(body=data, headers=lines, tokens=rotation))
    return script


def wrk(port: int, script: Path, seconds: int, pids: list[int]) -> Sample:
    """One pinned wrk run of ``seconds``, with the CPU ``pids`` spent meanwhile."""
    url = f"http://127.0.0.1:{port}/mcp"
    command = [*pinned(LOAD_CORE), "wrk", "-t1", f"-c{CONNECTIONS}", f"-d{seconds}s"]
    command += ["--timeout", "5s", "-s", str(script), url]
    server_before, busy_before = sum(map(_cpu_seconds, pids)), _busy_seconds(SERVER_CORE)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)  # wrk is the only child reaped
    done = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 30)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    server = sum(map(_cpu_seconds, pids)) - server_before
    busy = _busy_seconds(SERVER_CORE) - busy_before
    line = next((x for x in done.stdout.splitlines() if x.startswith("BENCH ")), None)
    if done.returncode != 0 or line is None:
        said = (done.stderr or done.stdout).strip()[:200]
        raise RuntimeError(f"wrk failed ({done.returncode}): {said}")
    requests, duration_us, p50, p99, broken, status = (float(x) for x in line.split()[1:])
    load = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    per, seconds_run = 1e6 / max(requests, 1), duration_us / 1e6
    return Sample(
        round(requests / duration_us * 1e6, 1),
        round(p50 / 1e3, 3),
        round(p99 / 1e3, 3),
        int(broken + status),
        round(server * per, 1),
        round(load * per, 1),
        round(server / seconds_run, 2),
        round(max(0.0, busy - server) / seconds_run, 2),
    )


def _busy_seconds(core: str) -> float:
    """CPU time ``core`` has spent on processes (interrupts left out: on loopback they
    are mostly the traffic's own network work, charged to no process)."""
    stat = Path("/proc/stat").read_text()
    line = next(x for x in stat.splitlines() if x.startswith(f"cpu{core} "))
    user, nice, system, *_, steal = map(int, line.split()[1:9])
    return (user + nice + system + steal) / os.sysconf("SC_CLK_TCK")


async def _answer(port: int, token: str | None) -> tuple[int, dict[str, str], bytes]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    body, headers = stateless_call()
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    try:
        writer.write(_request(port, body, headers))
        return await asyncio.wait_for(_response(reader), 10)
    finally:
        writer.close()


def check(name: str, port: int, token: str | None = None) -> None:
    """Refuse to time a row that does not answer the call with a JSON result."""
    status, headers, body = asyncio.run(_answer(port, token))
    json_answer = headers.get("content-type", "").startswith("application/json")
    if status != 200 or not json_answer or b'"result"' not in body or b'"isError":true' in body:
        raise RuntimeError(f"{name}: not a JSON result: {status} {headers} {body[:200]!r}")


def pinned(core: str) -> list[str]:
    """The prefix running a command on ``core``, ahead of the machine's other work: its
    own session (setsid does not fork a process that leads no group, so the pid stays the
    command's), whose scheduling group (Linux's autogroup, where enabled) and itself get
    ``NICE``. Where that is not allowed (not root), it runs as it is."""
    ahead = f'echo {NICE} > /proc/self/autogroup; exec "$@"'
    return ["setsid", "nice", "-n", str(NICE), "sh", "-c", ahead, "sh", "taskset", "-c", core]


@contextlib.contextmanager
def rows(work: Path, jwks: Path, loop: str = LOOP) -> Iterator[dict[str, tuple[int, list[int]]]]:
    """Every row's server, started and listening: name -> (port, its pids on the server core);
    the authorized app's keys in ``jwks``; every Python server on the event loop ``loop``."""
    env = {k: v for k, v in os.environ.items() if k != "MCP_REDIS_URL"}  # the example alone
    env["BENCH_AUTH_JWKS"] = str(jwks)
    with contextlib.ExitStack() as stack:
        found: dict[str, tuple[int, list[int]]] = {}
        for name, target in SERVERS.items():
            server = Hop(
                [*pinned(SERVER_CORE), *uvicorn_command(target, "{port}", HTTP, loop)], env
            )
            found[name] = _entered(stack, server)
        upstream, upstream_pids = found["example (direct)"]
        url = f"http://127.0.0.1:{upstream}/mcp"
        gateway = [sys.executable, "-m", "mcp_schema", "gateway", "--listen", "127.0.0.1:{port}"]
        for mode in ("monitor", "enforce"):
            flags = ["--upstream", url, "--report", str(work / f"{mode}.jsonl"), "--loop", loop]
            flags += ["--enforce"] if mode == "enforce" else []
            hop = Hop([*pinned(SERVER_CORE), *gateway, *flags])
            port, pids = _entered(stack, hop)
            found[f"gateway {mode}"] = (port, pids + upstream_pids)
        proxy = nginx(upstream, work, "$http_host", pinned(SERVER_CORE))
        if proxy is None:
            raise RuntimeError("nginx is not installed: apt-get install nginx")
        port, pids = _entered(stack, proxy)
        found["nginx"] = (port, pids + upstream_pids)
        yield found


def _entered(stack: contextlib.ExitStack, server: Server) -> tuple[int, list[int]]:
    stack.enter_context(server)
    return server.port, [server.process.pid]


def measure(seconds: int = SECONDS, rounds: int = ROUNDS, loop: str = LOOP) -> dict[str, Any]:
    """Every row for ``seconds`` in each of ``rounds`` rounds, on the event loop ``loop``."""
    samples: dict[str, list[Sample]] = {}
    with contextlib.ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-front-")))
        jwks, tokens = front_tokens.make(work)
        plain, authorized = wrk_script(work), wrk_script(work, tokens)
        scripts = {"authorized app": authorized}
        servers = stack.enter_context(rows(work, jwks, loop))
        for name, (port, pids) in servers.items():
            check(name, port, tokens[0] if name in scripts else None)
            wrk(port, scripts.get(name, plain), WARM_UP, pids)  # every token verified once
            samples[name] = []
        names = list(servers)
        for turn in range(rounds):
            for name in names[turn % len(names) :] + names[: turn % len(names)]:
                port, pids = servers[name]
                samples[name].append(wrk(port, scripts.get(name, plain), seconds, pids))
        reports = {mode: _lines(work / f"{mode}.jsonl") for mode in ("monitor", "enforce")}
    return {
        "rows": {name: _median(s) for name, s in samples.items()},
        "gateway_reports": reports,
        "connections": CONNECTIONS,
        "rounds": rounds,
        "seconds": seconds,
        "http": HTTP,
        "loop": loop,
        "load_average": os.getloadavg(),
    }


def _lines(path: Path) -> int:
    """The gateway's reports: an invalid message each (none expected here)."""
    return len(path.read_text().splitlines()) if path.exists() else 0


def _median(samples: list[Sample]) -> Row:
    medians: dict[str, Any] = {
        f.name: round(statistics.median(float(getattr(s, f.name)) for s in samples), 3)
        for f in fields(Sample)
    }
    medians["errors"] = sum(s.errors for s in samples)
    return Row(**medians, rounds=samples)


def targets(result: dict[str, Any]) -> list[tuple[str, str, str, bool]]:
    """(name, measured, goal, passed) of each target: the fields of ``bench.__main__.Target``."""
    found = []
    by: dict[str, Row] = result["rows"]
    for name, mine, base, field, bound, at_least in TARGETS:
        one, other = getattr(by[mine], field), getattr(by[base], field)
        ratio = one / other if other else float("inf")
        shown = f"{ratio:.2f} ({one:,.1f} / {other:,.1f})"
        if field == "rps":  # what it would be with the core to itself: steadier on a busy machine
            shown += f"; by CPU per request {by[base].server_us / by[mine].server_us:.2f}"
        if not bound:
            found.append((f"front: {name}", shown, "reported", True))
            continue
        passed = ratio >= bound if at_least else ratio <= bound
        goal = f"{'>=' if at_least else '<='} {bound:.2f}"
        found.append((f"front: {name}", shown, goal, passed))
    return found


def report(result: dict[str, Any]) -> None:
    print(
        f"\nFront doors: tools/call echo (2026-07-28, JSON), wrk 1 thread {result['connections']}"
        f" connections on core {LOAD_CORE}, servers on core {SERVER_CORE} (uvicorn"
        f" {result['http']}, {result['loop']}); medians of {result['rounds']} rounds of"
        f" {result['seconds']} s"
    )
    print(
        f"  {'row':<16} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'server CPU us/req':>18}"
        f" {'wrk CPU us/req':>15} {'errors':>7} {'core: ours':>11} {'others':>7}"
    )
    for name, row in result["rows"].items():
        print(
            f"  {name:<16} {row.rps:>9,.0f} {row.p50_ms:>8.2f} {row.p99_ms:>8.2f}"
            f" {row.server_us:>18,.0f} {row.load_us:>15,.1f} {row.errors:>7} {row.ours:>11.2f}"
            f" {row.others:>7.2f}"
        )
    reports = result["gateway_reports"]
    print(f"  gateway reports: monitor {reports['monitor']}, enforce {reports['enforce']}")


def jsonable(result: dict[str, Any]) -> dict[str, Any]:
    rows = {name: asdict(row) for name, row in result["rows"].items()}
    found = [
        dict(zip(("name", "measured", "goal", "passed"), t, strict=True)) for t in targets(result)
    ]
    return {**result, "rows": rows, "targets": found}


def record(result: dict[str, Any], path: Path = RESULTS) -> None:
    """Set ``"front"`` in ``path``, keeping what the other benches wrote there."""
    recorded = json.loads(path.read_text()) if path.exists() else {}
    recorded["front"] = jsonable(result)
    path.write_text(json.dumps(recorded, indent=2, ensure_ascii=False) + "\n")


def settings(quick: bool) -> tuple[int, int]:
    """Seconds per row and round, and rounds."""
    return (1, 3) if quick else (SECONDS, ROUNDS)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.front", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="3 shorter rounds")
    parser.add_argument("--rounds", type=int, help=f"rounds (at least 3; default {ROUNDS})")
    parser.add_argument("--seconds", type=int, help=f"per row and round (default {SECONDS})")
    parser.add_argument("--out", type=Path, default=RESULTS, help="the results file")
    parser.add_argument(
        "--loop",
        choices=("asyncio", "uvloop"),
        default=LOOP,
        help=f"every Python server's event loop (default {LOOP}: uvloop where installed)",
    )
    args = parser.parse_args(argv)
    if lacking := missing():
        parser.error(f"needs {', '.join(lacking)}: apt-get install wrk nginx util-linux")
    seconds, rounds = settings(args.quick)
    result = measure(args.seconds or seconds, max(3, args.rounds or rounds), args.loop)
    report(result)
    for name, measured, goal, passed in targets(result):
        print(f"  {'PASS' if passed else 'MISS'}  {name:<40} {measured}  (target {goal})")
    record(result, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
