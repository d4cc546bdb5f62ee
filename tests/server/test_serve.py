"""``python -m mcp_schema serve module:server``: a `Server` in a module of
its own directory, run by uvicorn; a setting that cannot work stops it
with one line before it listens; SIGTERM ends its listens (clients listen
again elsewhere) before the process stops."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mcp_schema.http_headers import request_headers
from tests.http.test_broker import _free_port
from tests.server.serving import message

SERVER = '''
from mcp_schema.server import Server

server = Server("served", version="2.0.0")


@server.tool()
def lookup(city: str) -> str:
    """The weather of a city."""
    return f"sunny in {city}"
'''
WAIT = 30.0


def command(work: Path, *more: str) -> list[str]:
    (work / "weather.py").write_text(SERVER)
    return [sys.executable, "-m", "mcp_schema", "serve", "--app-dir", str(work), *more]


@contextmanager
def serving(work: Path) -> Iterator[tuple[subprocess.Popen[str], int]]:
    port = _free_port()
    argv = command(work, "weather:server", "--port", str(port), "--log-level", "warning")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_")}
    process = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + WAIT
        while not healthy(port):
            assert process.poll() is None, process.communicate()[1]
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.05)
        yield process, port
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=WAIT)


def healthy(port: int) -> bool:
    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
        connection.request("GET", "/healthz")
        return connection.getresponse().status == 200
    except OSError:
        return False


def posted(
    port: int, value: dict[str, object], accept: str = "application/json"
) -> http.client.HTTPResponse:
    headers = {"content-type": "application/json", "accept": accept, **request_headers(value)}
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT)
    connection.request("POST", "/mcp", json.dumps(value), headers)
    return connection.getresponse()


def test_serve_runs_the_server_a_module_names(tmp_path: Path) -> None:
    with serving(tmp_path) as (_, port):
        answer = json.loads(
            posted(
                port, message("tools/call", {"name": "lookup", "arguments": {"city": "Oslo"}})
            ).read()
        )
        assert answer["result"]["content"][0]["text"] == "sunny in Oslo"
        assert answer["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["version"] == "2.0.0"


def test_sigterm_ends_the_listens_before_the_process_stops(tmp_path: Path) -> None:
    with serving(tmp_path) as (process, port):
        listen = message("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
        stream = posted(port, listen, accept="text/event-stream")
        assert stream.status == 200
        assert b"subscriptions/acknowledged" in stream.readline() + stream.readline()
        process.send_signal(signal.SIGTERM)
        rest = stream.read().decode()  # the stream ends: the drain cancelled the listen
        assert '"notifications/cancelled"' in rest and "listen again" in rest
        assert process.wait(WAIT) in (0, -signal.SIGTERM)
        assert "Traceback" not in (process.stderr.read() if process.stderr else "")


def test_a_setting_that_cannot_work_stops_serve_with_one_line(tmp_path: Path) -> None:
    env = {**os.environ, "MCP_STATE_KEY": "short"}
    done = subprocess.run(
        command(tmp_path, "weather:server"), env=env, capture_output=True, text=True, timeout=WAIT
    )
    assert done.returncode == 2
    assert done.stderr == (
        "error: MCP_STATE_KEY: keys[0] has 5 bytes; a key needs at least 32 "
        "(python -c 'import secrets; print(secrets.token_urlsafe(32))')\n"
    )


def test_a_module_that_is_not_there_stops_serve_with_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        command(tmp_path, "nowhere:server"), capture_output=True, text=True, timeout=WAIT
    )
    assert done.returncode == 2
    assert done.stderr.startswith("error: cannot import 'nowhere'") and done.stderr.count("\n") == 1


def test_workers_without_redis_stop_serve_with_one_line(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_")}
    argv = command(tmp_path, "weather:server", "--workers", "2")
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=WAIT)
    assert done.returncode == 2
    assert done.stderr.startswith("error: --workers: ") and "MCP_REDIS_URL" in done.stderr
