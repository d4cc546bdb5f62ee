"""``python -m mcp_schema gateway``: its refusals at start (exit status 2,
one ``error:`` line), and a run: listening once ready, reports to
``--report FILE`` as JSON lines, stopped by SIGTERM (its reports written first)."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from socket import IPPROTO_TCP, TCP_NODELAY
from typing import Any

import anyio
import httpx
import pytest

from mcp_schema.cli import main
from mcp_schema.gateway.command import add_arguments, app_of, bound_socket
from mcp_schema.gateway.monitor.asgi import GatewayApp
from mcp_schema.gateway.monitor.stdio import StdioGatewayApp
from mcp_schema.proxy import ReportLog
from tests.gateway.test_gateway import CALL, HEADERS, post, serving
from tests.gateway.test_stdio import EXAMPLE
from tests.gateway.test_stdio_bridge import expected, session

UP = ["--listen", "127.0.0.1:0", "--upstream", "http://127.0.0.1:1/mcp"]


def parsed(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(argv)


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--listen", "nowhere", "--upstream", "http://127.0.0.1:1/mcp"], "HOST:PORT"),
        (["--listen", "127.0.0.1:99999", "--upstream", "http://127.0.0.1:1/mcp"], "HOST:PORT"),
        (["--listen", "127.0.0.1:0", "--upstream", "ftp://x/mcp"], "http(s) URL"),
        (["--listen", "256.1.1.1:80", "--upstream", "http://127.0.0.1:1/mcp"], "cannot listen"),
        (["--listen", "127.0.0.1:0"], "--upstream URL or -- CMD"),
        (["--listen", "127.0.0.1:0", "--upstream", "http://x/mcp", "--", "cmd"], "not both"),
        (["--listen", "127.0.0.1:0", "--", "/no/such/command"], "cannot start"),
        (["--listen", "127.0.0.1:0", "--", sys.executable, "-c", "pass"], "before it answered"),
        ([*UP, "--allowed-host", "gw.example:80"], "without a port"),
        ([*UP, "--allowed-host", "gw.example/mcp"], "without a port"),
        ([*UP, "--allowed-origin", "https://app.example/page"], "takes an origin"),
        ([*UP, "--allowed-origin", "null"], "takes an origin"),
        ([*UP, "--upstream-host", "a b"], "upstream_host must be"),
        (["--listen", "127.0.0.1:0", "--upstream-host", "x", "--", "cmd"], "for an --upstream"),
    ],
)
def test_a_gateway_that_cannot_start_says_why_with_status_2(
    argv: list[str], said: str, capfd: pytest.CaptureFixture[str]
) -> None:
    assert main(["gateway", *argv]) == 2
    err = capfd.readouterr().err
    assert err.startswith("error: ") and said in err and err.count("\n") == 1


def test_the_precheck_options_are_repeatable_and_reach_the_app() -> None:
    hosts = ["--allowed-host", "GW.example", "--allowed-host", "[::1]"]
    origins = ["--allowed-origin", "https://app.example/", "--allowed-origin", "http://b.example:8"]
    args = parsed([*UP, *hosts, *origins, "--upstream-host", "backend:9"])
    assert args.allowed_host == ["GW.example", "[::1]"]
    app = app_of(args, ReportLog())
    assert isinstance(app, GatewayApp) and app.upstream_host == "backend:9"
    assert app.precheck.allowed_hosts == frozenset({"gw.example", "::1"})
    assert app.precheck.allowed_origins == frozenset({"https://app.example", "http://b.example:8"})
    plain = app_of(parsed(UP), ReportLog())
    assert isinstance(plain, GatewayApp) and plain.precheck.allowed_hosts is None
    assert plain.upstream_host is None


def test_an_allowed_host_is_admitted_by_the_gateway_the_command_builds() -> None:
    seen: list[bytes] = []

    async def upstream(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        if b"tools/call" in (await receive())["body"]:  # not the start-up probe
            seen.append(dict(scope["headers"])[b"host"])
        body = json.dumps({"jsonrpc": "2.0", "id": 7, "result": {"content": []}}).encode()
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    with serving(upstream) as url:
        argv = ["--listen", "127.0.0.1:0", "--upstream", url, "--allowed-host", "gw.example"]
        with serving(app_of(parsed(argv), ReportLog())) as front:
            admitted = post(front, CALL, {**HEADERS, "host": "gw.example"})
            other = post(front, CALL, {**HEADERS, "host": "evil.example"})
    assert (admitted.status_code, other.status_code) == (200, 421)
    assert seen == [b"gw.example"]


def test_the_stdio_gateway_gets_the_precheck_too() -> None:
    argv = ["--listen", "127.0.0.1:0", "--allowed-host", "gw.example", "--", *EXAMPLE]
    app = app_of(parsed(argv), ReportLog())
    assert isinstance(app, StdioGatewayApp)
    with serving(app) as url:
        admitted = post(url, CALL, {**HEADERS, "host": "gw.example"})
        rebound = post(url, CALL, {**HEADERS, "host": "evil.example"})
        foreign = post(url, CALL, {**HEADERS, "host": "gw.example", "origin": "https://e.example"})
    assert admitted.status_code == 200 and admitted.json()["result"]["content"][0]["text"] == "hi"
    assert (rebound.status_code, foreign.status_code) == (421, 403)


def test_the_connections_of_its_socket_send_without_delay() -> None:
    # Without TCP_NODELAY on what it accepts, each answer waits for the
    # client's delayed ACK (some 40 ms a request).
    sock = bound_socket("127.0.0.1", 0)
    found: list[int] = []

    async def serve() -> None:
        def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            found.append(writer.get_extra_info("socket").getsockopt(IPPROTO_TCP, TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(accepted, sock=sock)
        _, writer = await asyncio.open_connection(*sock.getsockname()[:2])
        while not found:
            await asyncio.sleep(0.01)
        writer.close()
        server.close()

    asyncio.run(asyncio.wait_for(serve(), 10))
    assert found == [1]


def test_a_state_key_too_short_is_status_2(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MCP_STATE_KEY", "short")
    argv = ["--listen", "127.0.0.1:0", "--bridge", "--", sys.executable, "-c", "pass"]
    assert main(["gateway", *argv]) == 2
    err = capfd.readouterr().err
    assert err.startswith("error: MCP_STATE_KEY: ") and err.count("\n") == 1


def test_a_report_file_that_cannot_be_opened_is_status_2(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    argv = ["--listen", "127.0.0.1:0", "--upstream", "http://127.0.0.1:1/mcp"]
    assert main(["gateway", *argv, "--report", str(tmp_path / "no" / "such")]) == 2
    assert "cannot write the report" in capfd.readouterr().err


@pytest.mark.slow  # a gateway process of its own: about 2 s
def test_a_run_reports_to_its_file_and_stops_on_sigterm(tmp_path: Path) -> None:
    report = tmp_path / "report.jsonl"

    async def upstream(scope: object, receive: object, send: object) -> None:
        raise AssertionError("enforce mode forwards nothing invalid")

    with serving(upstream) as url:
        command = [sys.executable, "-m", "mcp_schema", "gateway", "--listen", "127.0.0.1:0"]
        command += ["--upstream", url, "--enforce", "--report", str(report)]
        gateway = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
        try:
            assert gateway.stderr is not None
            line = gateway.stderr.readline()
            assert line.startswith("gateway: the upstream's probe told nothing")  # a 500
            line = gateway.stderr.readline()
            assert line.startswith("gateway: listening on http://127.0.0.1:")
            answer = httpx.post(
                line.split(" on ")[1].strip(),
                content=json.dumps(CALL),
                headers={**HEADERS, "mcp-name": "other"},
                timeout=10,
            )
            assert answer.status_code == 400
        finally:
            gateway.send_signal(signal.SIGTERM)
            status = gateway.wait(10)
    assert status == -signal.SIGTERM  # uvicorn's way: ended as by the signal
    [found] = [json.loads(line) for line in report.read_text().splitlines()]
    assert (found["code"], found["direction"]) == (-32020, "client->server")
    assert report.stat().st_mode & 0o777 == 0o600  # excerpts of what peers sent: the owner's


@pytest.mark.slow  # a gateway process and its stdio server: about 3 s
def test_a_stdio_server_is_bridged_for_a_2026_07_28_client(tmp_path: Path) -> None:
    server = Path(__file__).resolve().parents[2] / "examples" / "server.py"
    command = [sys.executable, "-m", "mcp_schema", "gateway", "--listen", "127.0.0.1:0"]
    command += ["--bridge", "--report", str(tmp_path / "report.jsonl"), "--"]
    command += [sys.executable, str(server)]
    environment = {**os.environ, "MCP_VERSIONS": "2025-06-18"}
    gateway = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=environment)
    try:
        assert gateway.stderr is not None
        line = gateway.stderr.readline()
        assert line.startswith("gateway: listening on http://127.0.0.1:")
        seen = anyio.run(session, line.split(" on ")[1].strip(), True)
    finally:
        gateway.send_signal(signal.SIGTERM)
        status = gateway.wait(10)
    assert seen == expected(True)
    assert status == -signal.SIGTERM
    assert (tmp_path / "report.jsonl").read_text() == ""
