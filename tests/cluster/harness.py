"""Three replicas of ``examples/http_server.py`` (uvicorn) sharing a
redis-server and one ``MCP_STATE_KEY``, behind nginx as a round-robin load balancer: every process on
loopback, its files in one work directory, every wait bounded, everything
torn down on the way out (`running`)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

# The broker tests' own way to start a redis-server and to find a free port:
# one of each in the test suite.
from tests.http.test_broker import _free_port, redis_server

EXAMPLES = Path(__file__).parents[2] / "examples"
WAIT = 30.0  # seconds a process has to start (or to stop)
STATE_KEY = "the cluster's shared state key of 32 bytes or more"  # every replica's

# The access log names the replica of each request and what the client sent
# ($request_body: nginx holds small bodies in memory to pass them on); the
# X-Upstream header tells the client which replica answered.
NGINX = """\
worker_processes 1;
daemon off;
pid {work}/nginx.pid;
error_log {work}/nginx-error.log warn;
{user}
events {{ worker_connections 256; }}
http {{
    log_format replicas escape=json
        '{{"upstream":"$upstream_addr","method":"$request_method",'
        '"session":"$http_mcp_session_id","status":"$status","body":"$request_body"}}';
    access_log {work}/access.log replicas;
    client_body_buffer_size 1m;
    client_body_temp_path {work}/client-body;
    proxy_temp_path {work}/proxy;
    fastcgi_temp_path {work}/fastcgi;
    uwsgi_temp_path {work}/uwsgi;
    scgi_temp_path {work}/scgi;
    upstream replicas {{
{servers}
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://replicas;
            proxy_http_version 1.1;
            proxy_set_header Host $http_host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header Connection "";
            proxy_buffering off;
            proxy_read_timeout 60s;
            add_header X-Upstream $upstream_addr always;
        }}
    }}
}}
"""


@dataclass
class Replica:
    address: str  # host:port, as nginx names it
    process: subprocess.Popen[bytes]
    command: tuple[str, ...] = ()  # how it was started (to start it again)
    environment: tuple[tuple[str, str], ...] = ()
    metrics: str | None = None  # host:port of its --metrics listener, when it has one


@dataclass
class Cluster:
    url: str  # the MCP endpoint, through nginx
    replicas: list[Replica]
    access_log: Path


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def _wait_for(process: subprocess.Popen[bytes], port: int, what: str, log: Path) -> None:
    deadline = time.monotonic() + WAIT
    while not _listening(port):
        if process.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"{what} did not start:\n{log.read_text(errors='replace')[-2000:]}")
        time.sleep(0.05)


def _stopped(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(WAIT / 3)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(WAIT)


def _started(
    stack: ExitStack, command: list[str], port: int, what: str, log: Path, **env: str
) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        process = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **env}
        )
    stack.callback(_stopped, process)
    _wait_for(process, port, what, log)
    return process


@contextmanager
def running(
    work: Path,
    replicas: int = 3,
    redis_url: str | None = None,
    port: int | None = None,
    metrics: bool = False,
    **env: str,
) -> Iterator[Cluster]:
    """The cluster, its files under ``work``, ``env`` added to each replica's
    environment (on ``redis_url``, else a redis-server of its own), nginx on
    ``port`` (by default a free one); every process stopped after.
    ``metrics``: each replica is run by ``python -m mcp_schema serve
    --metrics`` (`Replica.metrics`)."""
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.access(nginx, os.X_OK):
        pytest.fail("nginx is not installed (Debian: apt-get install nginx)")
    with ExitStack() as stack:
        if redis_url is None:
            redis_url = stack.enter_context(redis_server(work))
        started = []
        for i in range(replicas):
            own = _free_port()
            listener = f"127.0.0.1:{_free_port()}" if metrics else None
            command = [sys.executable, "-m", "uvicorn", "--app-dir", str(EXAMPLES)]
            command += ["http_server:app", "--host", "127.0.0.1", "--port", str(own)]
            command += ["--no-access-log", "--timeout-graceful-shutdown", "2"]
            if listener is not None:
                command = [sys.executable, "-m", "mcp_schema", "serve", "http_server:app"]
                command += ["--app-dir", str(EXAMPLES), "--port", str(own)]
                command += ["--log-level", "warning", "--metrics", listener]
            log = work / f"replica-{i}.log"
            environment = {"MCP_REDIS_URL": redis_url, "MCP_STATE_KEY": STATE_KEY, **env}
            process = _started(stack, command, own, f"replica {i}", log, **environment)
            kept = tuple(environment.items())
            replica = Replica(f"127.0.0.1:{own}", process, tuple(command), kept, listener)
            started.append(replica)
        port = port or _free_port()
        servers = "\n".join(f"        server {r.address};" for r in started)
        # Workers run as the master's user: as root, nginx would drop to nobody,
        # who cannot write the temp paths of a private work directory.
        user = "user root;" if os.geteuid() == 0 else ""
        config = work / "nginx.conf"
        config.write_text(NGINX.format(work=work, user=user, servers=servers, port=port))
        command = [nginx, "-p", str(work), "-c", str(config), "-e", str(work / "nginx-error.log")]
        _started(stack, command, port, "nginx", work / "nginx.log")
        yield Cluster(f"http://127.0.0.1:{port}/mcp", started, work / "access.log")
