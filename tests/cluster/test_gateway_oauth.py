"""The gateway in front of upstreams that require a token, getting its own
from node-oidc-provider (`tests.auth.provider`) by the client credentials
grant (``--upstream-client-id``, its secret in the environment): the
upstreams are ``examples/http_server.py`` with ``MCP_AUTH_ISSUER`` and
``MCP_AUTH_RESOURCE``, serving both eras, the handshake era alone or
2026-07-28 alone, so that the forward mode (monitor and enforce) and both
bridges each reach a protected upstream. The gateway's own clients bring
no token; its log never shows one, nor the secret."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from mcp_schema.http.client import HttpClient
from tests.auth.provider import provider
from tests.cluster.harness import _started, _stopped
from tests.http.test_broker import _free_port

pytestmark = pytest.mark.cluster
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SECRET = "gateway-secret-0123456789abcdef"
SCOPE = "mcp"
KINDS = {"both": None, "handshake": "2025-11-25", "stateless": "2026-07-28"}
LISTENING = re.compile(r"gateway: listening on (?P<url>http://\S+)")
START_SECONDS = 30.0


@dataclass
class Upstreams:
    urls: dict[str, str]  # kind: its /mcp URL
    work: Path


@pytest.fixture(scope="module")
def upstreams(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Upstreams]:
    work = tmp_path_factory.mktemp("gateway-oauth")
    ports = {kind: _free_port() for kind in KINDS}
    urls = {kind: f"http://127.0.0.1:{port}/mcp" for kind, port in ports.items()}
    clients = [{"client_id": "gateway", "client_secret": SECRET, "scope": SCOPE}]
    resources = {url: {"format": "jwt", "scope": SCOPE} for url in urls.values()}
    with provider(clients, resources) as issuer, ExitStack() as stack:
        for kind, versions in KINDS.items():
            command = [sys.executable, "-m", "uvicorn", "--app-dir", str(EXAMPLES)]
            command += ["http_server:app", "--host", "127.0.0.1", "--port", str(ports[kind])]
            env = {"MCP_AUTH_ISSUER": issuer, "MCP_AUTH_RESOURCE": urls[kind]}
            env |= {"MCP_AUTH_SCOPES": SCOPE, **({"MCP_VERSIONS": versions} if versions else {})}
            _started(stack, command, ports[kind], f"upstream {kind}", work / f"{kind}.log", **env)
        yield Upstreams(urls, work)


@contextmanager
def gateway(upstream: str, flags: tuple[str, ...], log: Path) -> Iterator[str]:
    """``python -m mcp_schema gateway`` in front of ``upstream`` with its own
    client credentials: its URL."""
    command = [sys.executable, "-m", "mcp_schema", "gateway", "--listen", "127.0.0.1:0"]
    command += ["--upstream", upstream, "--upstream-client-id", "gateway"]
    command += ["--upstream-client-secret-env", "GATEWAY_SECRET", "--upstream-scope", SCOPE]
    with log.open("w") as err:
        process = subprocess.Popen(
            [*command, *flags],
            stdout=subprocess.DEVNULL,
            stderr=err,
            env={**os.environ, "GATEWAY_SECRET": SECRET},
        )
    try:
        deadline = time.monotonic() + START_SECONDS
        while (found := LISTENING.search(log.read_text())) is None:
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(
                    f"the gateway did not start (exit {process.poll()}):\n{log.read_text()}"
                )
            time.sleep(0.05)
        yield found["url"]
    finally:
        _stopped(process)


async def called(url: str, mode: str) -> tuple[list[str], str]:
    """The tools through the gateway at ``url`` and what ``echo`` said, as a
    client in ``mode`` that brings no token of its own."""
    info = {"name": "gateway-oauth-test", "version": "1"}
    async with HttpClient(url, info=info, mode=mode, timeout=30) as client:  # type: ignore[arg-type]
        tools = await client.list_tools()
        echoed = await client.call_tool("echo", {"text": "through the gateway"})
    names = [tool.name for tool in tools.tools]  # type: ignore[attr-defined]
    return names, echoed.structured_content["text"]  # type: ignore[attr-defined]


def test_the_upstreams_refuse_a_request_without_a_token(upstreams: Upstreams) -> None:
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    answer = httpx.post(upstreams.urls["both"], json=listing, timeout=10)
    assert answer.status_code == 401 and "resource_metadata" in answer.headers["www-authenticate"]


@pytest.mark.parametrize(
    ("kind", "flags", "mode"),
    [
        ("both", (), "auto"),  # forward, monitor mode
        ("both", ("--enforce",), "handshake"),
        ("handshake", ("--bridge",), "stateless"),  # a 2026-07-28 client, bridged
        ("stateless", ("--bridge",), "handshake"),  # a handshake-era client, bridged
    ],
)
def test_the_gateway_reaches_a_protected_upstream_with_its_own_token(
    upstreams: Upstreams, kind: str, flags: tuple[str, ...], mode: str
) -> None:
    log = upstreams.work / f"gateway-{kind}-{'-'.join(flags) or 'monitor'}-{mode}.log"
    with gateway(upstreams.urls[kind], flags, log) as url:
        names, said = asyncio.run(asyncio.wait_for(called(url, mode), 60))
    assert "echo" in names and said == "through the gateway"
    text = log.read_text()
    assert "Traceback" not in text and SECRET not in text
    assert "eyJ" not in text and "Bearer " not in text  # never a token
