"""The server layer's cost: ``python -m bench.server_layer [--quick]``.

A 2026-07-28 ``tools/call echo`` (its ``_meta`` and ``Mcp-*`` headers, a JSON
answer with ``structuredContent``) to four apps, each under one uvicorn
worker (httptools), taking the load of ``bench.http`` in alternating rounds:

* ``raw``: ``App(Endpoint(serve))``, ``serve`` a hand-written handler;
* ``layer``: the same endpoint serving ``Server.handler``, an async
  ``echo`` (arguments checked against its ``inputSchema``, the result
  checked against its ``outputSchema`` and converted);
* ``asgi``: the whole replica ``server.asgi()`` builds (health routes, the
  tool set, tasks, the drain), an async ``echo``;
* ``asgi sync``: the same with a sync ``echo``, run in a worker thread.

Reported: requests per second, p50 and p99, the server's CPU per request,
and the ratios to ``raw`` (target: ``layer`` keeps at least
`LAYER_TARGET` of it); and the code lines (no blanks, comments or
docstrings) of ``examples/remote_server.py``, the issue's trial server on
the layer, against the 31 it took on the official SDK's ``MCPServer``.
Nothing here asserts.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from dataclasses import asdict
from typing import Any

from typing_extensions import TypedDict

from bench.http import Run, Server, _load, _summary, era_requests
from bench.workloads import ROOT
from mcp_schema.http import Endpoint
from mcp_schema.http.asgi import App
from mcp_schema.server import Server as Layer
from mcp_schema.server import ToolResult
from mcp_schema.session import Event, RequestReceived, ServerSession
from tests.examples.test_glue import lines_of_code

LAYER_TARGET = 0.90
MCPSERVER_LINES = 31  # the trial server on the official SDK's MCPServer
ROUNDS = 5
INFO = {"name": "bench-layer", "version": "1"}
APPS = {
    "raw": "raw",
    "layer": "layer",
    "asgi": "replica",
    "asgi sync": "replica_sync",
}


class Text(TypedDict):
    text: str


def serve(session: ServerSession, event: Event) -> None:
    """The hand-written handler: the echo the layer's makes."""
    if isinstance(event, RequestReceived):
        said = str((getattr(event.message.params, "arguments", None) or {}).get("text"))
        result = {"content": [{"type": "text", "text": said}], "structuredContent": {"text": said}}
        session.respond(event, result)


async def _echo(text: str) -> ToolResult[Text]:
    return ToolResult(text, {"text": text})


def _sync_echo(text: str) -> ToolResult[Text]:
    return ToolResult(text, {"text": text})


def _server(asynchronous: bool) -> Layer:
    server = Layer("bench-layer", version="1")
    server.tool("echo")(_echo if asynchronous else _sync_echo)
    return server


def _endpoint(handler: Any) -> App:
    options: dict[str, Any] = {"capabilities": {"tools": {}}, "handler_version": "2026-07-28"}
    return App(Endpoint(handler, info=INFO, **options))


def raw() -> App:
    return _endpoint(serve)


def layer() -> App:
    return _endpoint(_server(asynchronous=True).handler)


def replica() -> Any:
    return _server(asynchronous=True).asgi(env={})


def replica_sync() -> Any:
    return _server(asynchronous=False).asgi(env={})


def measure(seconds: float, rounds: int = ROUNDS) -> dict[str, Any]:
    """Every app for ``seconds`` in all, in alternating rounds."""
    with contextlib.ExitStack() as stack:
        servers = {
            name: stack.enter_context(Server(["--factory", f"bench.server_layer:{factory}"]))
            for name, factory in APPS.items()
        }
        requests = {name: era_requests("2026-07-28", s.port) for name, s in servers.items()}
        runs: dict[str, list[Run]] = {name: [] for name in servers}
        for name, server in servers.items():
            asyncio.run(_load(server.port, requests[name], 0.5, None))  # warm up
        for _ in range(rounds):
            for name, server in servers.items():
                load = _load(
                    server.port, requests[name], seconds / rounds, None, pid=server.process.pid
                )
                runs[name].append(asyncio.run(load))
    loads = {name: _summary(r) for name, r in runs.items()}
    trial = (ROOT / "examples" / "remote_server.py").read_text(encoding="utf-8")
    return {"loads": loads, "rounds": rounds, "trial_lines": lines_of_code(trial)}


def targets(result: dict[str, Any]) -> list[tuple[str, str, str, bool]]:
    """(name, measured, goal, passed), the fields of ``bench.__main__.Target``."""
    loads = result["loads"]
    ratio = loads["layer"].rps / loads["raw"].rps if loads["raw"].rps else 0.0
    lines = result["trial_lines"]
    return [
        (
            "server layer req/s over the raw handler",
            f"{ratio:.2f}x",
            f">= {LAYER_TARGET:.2f}x",
            ratio >= LAYER_TARGET,
        ),
        (
            "trial server on the layer, code lines",
            str(lines),
            f"<= {MCPSERVER_LINES} (MCPServer)",
            lines <= MCPSERVER_LINES,
        ),
    ]


def report(result: dict[str, Any]) -> None:
    loads = result["loads"]
    print("\nThe server layer, 2026-07-28 tools/call echo, one uvicorn worker (httptools)")
    print(
        f"  {'app':<10} {'req/s':>9} {'of raw':>7} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7} {'server CPU us/req':>18}"
    )
    for name, load in loads.items():
        share = load.rps / loads["raw"].rps if loads["raw"].rps else 0.0
        print(
            f"  {name:<10} {load.rps:>9,.0f} {share:>7.2f} {load.p50_ms:>8.2f} {load.p99_ms:>8.2f}"
            f" {load.errors:>7} {load.server_us:>18,.0f}"
        )
    print(
        f"  examples/remote_server.py: {result['trial_lines']} code lines (MCPServer: {MCPSERVER_LINES})"
    )


def jsonable(result: dict[str, Any]) -> dict[str, Any]:
    return {**result, "loads": {n: asdict(load) for n, load in result["loads"].items()}}


def settings(quick: bool) -> float:
    """Seconds per app."""
    return 2.0 if quick else 10.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.server_layer", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="shorter runs")
    args = parser.parse_args(argv)
    result = measure(settings(args.quick))
    report(result)
    for name, measured, goal, passed in targets(result):
        print(f"  {'PASS' if passed else 'MISS'}  {name:<48} {measured}  (target {goal})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
