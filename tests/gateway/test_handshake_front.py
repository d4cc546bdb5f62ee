"""The era bridge's first direction end to end: handshake-era clients
through ``python -m mcp_schema gateway --bridge`` (or its `GatewayApp`) to
``examples/http_server.py`` serving 2026-07-28 only, under uvicorn.

The official TypeScript SDK client (1.32.2, ``tests/peers/ts_bridge_client.mjs``):
every tool, with and without elicitation and sampling callbacks, several
clients at once. Then what a hand-made client shows: a closed stream
ending its call (the input round it waited on dropped), DELETE ending the
session, the command's probe and its refusal of an upstream that cannot be
reached; the front checking requests by the gateway's precheck."""

from __future__ import annotations

import asyncio
import contextlib
import json
import runpy
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_schema.cli import main
from mcp_schema.gateway import command
from mcp_schema.gateway.bridge import handshake_front
from mcp_schema.gateway.bridge.handshake_front import HandshakeFront, handshake_capabilities
from mcp_schema.gateway.findings import UPSTREAM_FAILED
from mcp_schema.gateway.http_upstream import upstream_client
from mcp_schema.gateway.monitor.asgi import GatewayApp
from mcp_schema.gateway.probe import Served, probe_upstream
from mcp_schema.http import Endpoint
from mcp_schema.http.asgi import App
from mcp_schema.http.pool import HttpClient
from mcp_schema.http.precheck import Precheck
from mcp_schema.proxy import ReportLog
from mcp_schema.session import ClientSession, Event, RequestReceived, ServerSession
from tests.gateway.test_gateway import reported, serving, waited_for

ROOT = Path(__file__).resolve().parents[2]
HTTP_SERVER = runpy.run_path(str(ROOT / "examples" / "http_server.py"), run_name="example")
ACCEPT = "application/json, text/event-stream"


@contextmanager
def upstream() -> Iterator[str]:
    """``examples/http_server.py`` as ``MCP_VERSIONS=2026-07-28`` makes it: its URL."""
    with serving(HTTP_SERVER["server"].asgi(env={}, versions="2026-07-28")) as url:
        yield url


def counting(methods: list[bytes | None]) -> Any:
    """The app `upstream` serves, adding each request's ``Mcp-Method`` to ``methods``."""
    example = HTTP_SERVER["server"].asgi(env={}, versions="2026-07-28")

    async def counted(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            methods.append(dict(scope["headers"]).get(b"mcp-method"))
        await example(scope, receive, send)

    return counted


@contextmanager
def gateway_process(url: str) -> Iterator[tuple[str, list[str]]]:
    """``gateway --bridge`` in front of ``url``: its URL, and what it said first."""
    argv = [sys.executable, "-m", "mcp_schema", "gateway", "--listen", "127.0.0.1:0", "--bridge"]
    process = subprocess.Popen([*argv, "--upstream", url], stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    said: list[str] = []
    try:
        while not (said and "listening on" in said[-1]):
            line = process.stderr.readline()
            assert line, f"the gateway stopped: {said}"
            said.append(line.strip())
        yield said[-1].rsplit(" ", 1)[1], said
    finally:
        process.terminate()
        process.wait(10)


def test_the_typescript_client_through_the_bridge() -> None:
    # Imported here, as tests/cluster does: the Node wheel and the pinned SDK.
    from tests.peers.interop import PACKAGES, WORK, install, node

    install(WORK, PACKAGES)  # a no-op once build/interop holds them
    reports = ReportLog()
    with upstream() as url, serving(bridged_app(url, reports)) as gateway:
        done = node(ROOT / "tests" / "peers" / "ts_bridge_client.mjs", gateway, timeout=60)
    steps = [line for line in done.stdout.splitlines() if line.startswith(("ok", "FAIL"))]
    assert done.returncode == 0 and len(steps) == 16, done.stdout + done.stderr[-2000:]
    assert reported(reports) == []  # nothing refused on good traffic


@pytest.mark.slow  # a gateway process of its own: about 3 s
def test_the_command_probes_then_bridges() -> None:
    with upstream() as url, gateway_process(url) as (gateway, said):
        assert said[0] == (
            "gateway: the upstream serves 2026-07-28: handshake-era clients are bridged"
        )

        async def run() -> None:
            async with httpx.AsyncClient(timeout=10) as http:
                hand = Hand(http, gateway)
                await hand.initialize({})
                call = hand.message("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
                answer = await http.post(gateway, headers=hand.headers(), json=call)
                (data,) = [line for line in answer.text.splitlines() if line.startswith("data:")]
                assert json.loads(data[5:])["result"]["content"][0]["text"] == "hi"

        asyncio.run(run())


def test_an_unreachable_upstream_stops_the_bridge_before_it_listens(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(command, "PROBE_SECONDS", 0.3)
    argv = ["--listen", "127.0.0.1:0", "--bridge", "--upstream", "http://127.0.0.1:1/mcp"]
    assert main(["gateway", *argv]) == 2
    err = capfd.readouterr().err
    assert err.startswith("error: the upstream cannot be reached") and "tried for 0.3 s" in err
    assert "listening" not in err


def test_the_capabilities_declared_to_handshake_clients() -> None:
    offered = {"tools": {}, "resources": {"subscribe": True, "listChanged": True}, "extensions": {}}
    assert handshake_capabilities(offered) == {"tools": {}, "resources": {"listChanged": True}}


def first_init() -> dict[str, Any]:
    return {"protocolVersion": "2025-11-25", "clientInfo": {"name": "hand", "version": "1"}}


class Hand:
    """A hand-made handshake-era client of the gateway at ``url``."""

    def __init__(self, http: httpx.AsyncClient, url: str) -> None:
        self.http, self.url, self.session = http, url, ""
        self.next_id = 0

    def headers(self) -> dict[str, str]:
        found = {"content-type": "application/json", "accept": ACCEPT}
        if self.session:
            found |= {"mcp-session-id": self.session, "mcp-protocol-version": "2025-11-25"}
        return found

    async def initialize(self, capabilities: dict[str, Any]) -> dict[str, Any]:
        params = {
            "protocolVersion": "2025-11-25",
            "capabilities": capabilities,
            "clientInfo": {"name": "hand", "version": "1"},
        }
        answer = await self.http.post(
            self.url, headers=self.headers(), json=self.message("initialize", params)
        )
        self.session = answer.headers["mcp-session-id"]
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (
            await self.http.post(self.url, headers=self.headers(), json=initialized)
        ).status_code == 202
        return dict(answer.json()["result"])

    def message(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        return {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}


def bridged_app(url: str, reports: ReportLog | None = None) -> GatewayApp:
    async def probed() -> Any:
        http = upstream_client()
        try:
            return await probe_upstream(url, http)
        finally:
            await http.aclose()

    return GatewayApp(url, served=asyncio.run(probed()), reports=reports)


def test_a_closed_stream_ends_its_call_and_delete_ends_the_session() -> None:
    with upstream() as url:
        app = bridged_app(url)
        assert app.front is not None
        front = app.front
        with serving(app) as gateway:

            async def run() -> None:
                async with httpx.AsyncClient(timeout=10) as http:
                    hand = Hand(http, gateway)
                    result = await hand.initialize({"elicitation": {}})
                    assert result["serverInfo"]["name"] == "example-http-server"
                    assert "extensions" not in result["capabilities"]
                    call = hand.message("tools/call", {"name": "ask", "arguments": {}})
                    async with http.stream(
                        "POST", gateway, headers=hand.headers(), json=call
                    ) as answer:
                        async for line in answer.aiter_lines():
                            if line.startswith(
                                "data:"
                            ):  # the upstream's ask, as elicitation/create
                                assert json.loads(line[5:])["method"] == "elicitation/create"
                                break
                    (bridged,) = front._bridged.values()
                    for _ in range(200):  # the gateway hears of the closed stream
                        if bridged.calls.pending() == 0:
                            break
                        await asyncio.sleep(0.01)
                    assert bridged.calls.pending() == 0
                    gone = await http.delete(gateway, headers=hand.headers())
                    assert gone.status_code == 200 and not front._bridged
                    after = await http.post(
                        gateway, headers=hand.headers(), json=hand.message("tools/list", {})
                    )
                    assert after.status_code == 404

            asyncio.run(run())


@pytest.mark.parametrize("bound", ["idle", "count"])
def test_sessions_end_when_idle_and_none_is_ended_to_make_room(
    bound: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [1000.0]  # the sessions' clock, moved by hand
    monkeypatch.setattr(handshake_front, "monotonic", lambda: now[0])
    with upstream() as url:
        served = bridged_app(url).served
        assert served is not None
        clients: list[HttpClient] = []

        def http() -> HttpClient:  # made in the server's loop, at first use
            if not clients:
                clients.append(upstream_client())
            return clients[0]

        idle = bound == "idle"
        front = HandshakeFront(url, served, http, idle_seconds=60, max_sessions=9 if idle else 1)
        with serving(front) as gateway:

            async def run() -> None:
                async with httpx.AsyncClient(timeout=10) as client:
                    first = Hand(client, gateway)
                    await first.initialize({})
                    assert len(front._bridged) == 1
                    if idle:
                        now[0] += 61
                    else:  # the table is full: the newcomer is refused, the first stays
                        second = Hand(client, gateway)
                        init = second.message("initialize", {**first_init(), "capabilities": {}})
                        refused = await client.post(gateway, headers=second.headers(), json=init)
                        assert refused.status_code == 429, refused.text
                        assert refused.json()["id"] == init["id"]
                    listed = first.message("tools/list", {})
                    answer = await client.post(gateway, headers=first.headers(), json=listed)
                    assert answer.status_code == (404 if idle else 200)
                    assert len(front._bridged) == (0 if idle else 1)

            asyncio.run(run())


def test_a_client_closing_its_stream_cancels_the_call_in_flight_upstream() -> None:
    cut = threading.Event()

    def listing(session: ServerSession, event: Event) -> None:
        if isinstance(event, RequestReceived):  # tools/list: the call never gets here
            session.respond(event, {"tools": []})

    served = App(
        Endpoint(
            listing,
            info={"name": "slow", "version": "1"},
            capabilities={"tools": {}},
            versions=["2026-07-28"],
        )
    )

    async def slow(scope: Any, receive: Any, send: Any) -> None:
        """Serves discover; a tools/call gets its stream opened, then nothing till the end."""
        if scope["type"] != "http" or dict(scope["headers"]).get(b"mcp-method") != b"tools/call":
            return await served(scope, receive, send)
        while (await receive()).get("more_body"):
            pass
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b": wait\n\n", "more_body": True})
        while (await receive())["type"] != "http.disconnect":
            pass
        cut.set()

    with serving(slow) as url, serving(bridged_app(url)) as gateway:

        async def run() -> None:
            async with httpx.AsyncClient(timeout=10) as http:
                hand = Hand(http, gateway)
                await hand.initialize({})
                await http.post(
                    gateway, headers=hand.headers(), json=hand.message("tools/list", {})
                )
                call = hand.message("tools/call", {"name": "t", "arguments": {}})
                async with http.stream("POST", gateway, headers=hand.headers(), json=call) as open_:
                    assert open_.status_code == 200  # the answer's stream is open: leave it
            for _ in range(300):
                if cut.is_set():
                    break
                await asyncio.sleep(0.01)
            assert cut.is_set()  # the upstream saw its request's stream closed, session alive

        asyncio.run(run())


def test_what_the_bridge_does_not_carry_is_reported() -> None:
    reports = ReportLog()
    with upstream() as url, serving(bridged_app(url, reports)) as gateway:

        async def run() -> None:
            async with httpx.AsyncClient(timeout=10) as http:
                hand = Hand(http, gateway)
                await hand.initialize({"roots": {"listChanged": True}})
                changed = {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}
                sent = await http.post(gateway, headers=hand.headers(), json=changed)
                assert sent.status_code == 202

        asyncio.run(run())
    (line,) = reported(reports)
    assert line["direction"] == "client->server" and "roots/list_changed" in line["message"]


def test_a_request_of_a_session_the_front_never_bridged_is_answered() -> None:
    served = Served(("2026-07-28",), False, {"tools": {}})
    front = HandshakeFront("http://127.0.0.1:1/mcp", served, upstream_client)
    client = ClientSession(info={"name": "c", "version": "1"})
    server = ServerSession(info={"name": "s", "version": "1"}, capabilities={"tools": {}})
    client.initialize()
    for frame in client.data_to_send():
        server.receive(frame)  # negotiated here, not through the front
    for frame in server.data_to_send():
        client.receive(frame)
    client.request("tools/list")
    (frame,) = [f for f in client.data_to_send() if b"tools/list" in f]
    (request,) = server.receive(frame)
    front._serve(server, request)
    (answer,) = server.data_to_send()
    assert json.loads(answer)["error"]["code"] == -32603


@pytest.mark.parametrize(("host", "status"), [(b"gw.example", 404), (b"localhost", 421)])
def test_the_front_checks_by_the_precheck_it_is_given(host: bytes, status: int) -> None:
    # The gateway's rules, not its own: a host the gateway serves is served here too.
    served = Served(("2026-07-28",), False, {"tools": {}})
    precheck = Precheck(allowed_hosts=["gw.example"])
    front = HandshakeFront("http://127.0.0.1:1/mcp", served, upstream_client, precheck=precheck)
    headers = [(b"host", host), (b"mcp-session-id", b"nobody"), (b"accept", b"text/event-stream")]
    scope = {"type": "http", "method": "GET", "path": "/mcp", "headers": headers}
    sent: list[Any] = []

    async def send(message: Any) -> None:
        sent.append(message)

    async def receive() -> Any:
        return {"type": "http.disconnect"}

    asyncio.run(front({**scope, "server": ("127.0.0.1", 3000)}, receive, send))
    assert sent[0]["status"] == status


def test_the_sessions_share_one_upstream_listen_and_each_hears_its_changes() -> None:
    methods: list[bytes | None] = []
    with serving(counting(methods)) as url, serving(bridged_app(url)) as gateway:

        async def run() -> list[str]:
            heard: list[str] = []
            async with httpx.AsyncClient(timeout=10) as http:
                hands = [Hand(http, gateway) for _ in range(3)]
                for hand in hands:
                    await hand.initialize({})

                async def hear(hand: Hand) -> None:
                    headers = {**hand.headers(), "accept": "text/event-stream"}
                    async with http.stream("GET", gateway, headers=headers) as stream:
                        async for line in stream.aiter_lines():
                            if line.startswith("data:"):
                                heard.append(json.loads(line[5:])["method"])
                                return

                streams = [asyncio.ensure_future(hear(hand)) for hand in hands]
                for _ in range(100):  # the shared listen is open
                    if methods.count(b"subscriptions/listen"):
                        break
                    await asyncio.sleep(0.02)
                await asyncio.sleep(0.2)
                toggle = hands[0].message("tools/call", {"name": "toggle", "arguments": {}})
                await http.post(gateway, headers=hands[0].headers(), json=toggle)
                await asyncio.wait_for(asyncio.gather(*streams), 10)
            return heard

        heard = asyncio.run(run())
    assert heard == ["notifications/tools/list_changed"] * 3
    assert methods.count(b"subscriptions/listen") == 1  # one, for all three sessions


def test_an_upstream_gone_is_reported_with_why_and_told_the_client_without_it() -> None:
    reports = ReportLog()
    methods: list[bytes | None] = []
    with contextlib.ExitStack() as upstream_runs:
        url = upstream_runs.enter_context(serving(counting(methods)))
        with serving(bridged_app(url, reports)) as gateway:

            async def run() -> dict[str, Any]:
                async with httpx.AsyncClient(timeout=10) as http:
                    hand = Hand(http, gateway)
                    await hand.initialize({})
                    # The session's discover and the shared listen (after the
                    # probe's discover and its own) reach the upstream before it
                    # stops: a connection it accepts as it stops may be left
                    # open, unanswered, when its loop ends. (Both servers run in
                    # threads of their own: this loop has nothing else to do.)
                    waited_for(
                        lambda: (
                            methods.count(b"server/discover") >= 3
                            and b"subscriptions/listen" in methods
                        )
                    )
                    upstream_runs.close()  # the server stops; the bridge goes on
                    call = hand.message("tools/call", {"name": "echo", "arguments": {"text": "a"}})
                    answer = await http.post(gateway, headers=hand.headers(), json=call)
                    (data,) = [ln for ln in answer.text.splitlines() if ln.startswith("data:")]
                    return dict(json.loads(data[5:]))

            failed = asyncio.run(run())
    assert failed["error"]["message"] == UPSTREAM_FAILED  # not the upstream's address
    # One finding per exchange that failed: the bridge's own tools/list first, then the call.
    found = [r for r in reported(reports) if r["direction"] == "server->client"]
    assert [r["frame"].split('"method":"')[1].split('"')[0] for r in found] == [
        "tools/list",
        "tools/call",
    ]
    for finding in found:
        assert "exchange with the upstream failed" in finding["message"]
        assert url.split("//")[1].split("/")[0] in finding["message"]
