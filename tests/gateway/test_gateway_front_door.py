"""`mcp_schema.gateway.monitor.asgi.GatewayApp`'s front door, in both modes: the
precheck before anything is forwarded (a rebound ``Host`` is 421, a
foreign ``Origin`` 403, a ``Content-Length`` no body has 413), the ``Host``
the upstream gets (the client's, or ``upstream_host``), the hop-by-hop
fields dropped both ways (``Connection``'s own included), a body too slow
(408), and the era of a POST read from its body when a bridge waits."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from mcp_schema.gateway import ExchangeValidator
from mcp_schema.gateway.monitor.asgi import GatewayApp
from mcp_schema.gateway.probe import Served
from mcp_schema.http.adapter import Message
from mcp_schema.http.precheck import Precheck
from mcp_schema.proxy import ReportLog
from tests.examples.test_versions_served import INITIALIZE
from tests.gateway.test_gateway import CALL, HEADERS, post, reported, serving

ANSWER = {"jsonrpc": "2.0", "id": 7, "result": {"resultType": "complete", "content": []}}
NOWHERE = "http://127.0.0.1:1/mcp"  # nothing may be sent there


def recording(seen: list[dict[bytes, bytes]], extra: list[tuple[bytes, bytes]] = []) -> Any:  # noqa: B006 - read only
    """An upstream keeping each request's headers and answering `ANSWER`
    (with ``extra`` header fields)."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body"):
            pass
        seen.append(dict(scope["headers"]))
        headers = [(b"content-type", b"application/json"), *extra]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": json.dumps(ANSWER).encode()})

    return app


@pytest.mark.parametrize("enforce", [False, True])
@pytest.mark.parametrize(
    ("sent", "status"),
    [
        ({"host": "evil.example"}, 421),  # a page whose name was rebound to 127.0.0.1
        ({"origin": "https://evil.example"}, 403),
        ({"content-type": "text/plain"}, 415),
    ],
)
def test_a_request_the_precheck_refuses_reaches_nothing(
    enforce: bool, sent: dict[str, str], status: int
) -> None:
    seen: list[dict[bytes, bytes]] = []
    log = ReportLog()
    with (
        serving(recording(seen)) as upstream,
        serving(GatewayApp(upstream, enforce=enforce, reports=log)) as url,
    ):
        answer = post(url, CALL, {**HEADERS, **sent})
    assert answer.status_code == status and "error" in answer.json()
    assert seen == [] and reported(log) == []


@pytest.mark.parametrize("enforce", [False, True])
def test_the_clients_host_and_a_loopback_origin_reach_the_upstream_unchanged(
    enforce: bool,
) -> None:
    seen: list[dict[bytes, bytes]] = []
    with (
        serving(recording(seen)) as upstream,
        serving(GatewayApp(upstream, enforce=enforce)) as url,
    ):
        host = url.split("/")[2]
        answer = post(url, CALL, {**HEADERS, "origin": "http://localhost:5173"})
        named = post(url, CALL, {**HEADERS, "host": "localhost"})
    assert answer.status_code == named.status_code == 200
    assert [s[b"host"] for s in seen] == [host.encode(), b"localhost"]
    assert seen[0][b"origin"] == b"http://localhost:5173"


def test_upstream_host_replaces_the_clients() -> None:
    seen: list[dict[bytes, bytes]] = []
    with (
        serving(recording(seen)) as upstream,
        serving(GatewayApp(upstream, upstream_host="backend.internal:8080")) as url,
    ):
        assert post(url, CALL).status_code == 200
    assert seen[0][b"host"] == b"backend.internal:8080"


@pytest.mark.parametrize("enforce", [False, True])
def test_a_field_that_connection_names_is_forwarded_neither_way(enforce: bool) -> None:
    seen: list[dict[bytes, bytes]] = []
    named = [(b"connection", b"x-down"), (b"x-down", b"secret"), (b"x-kept", b"1")]
    with (
        serving(recording(seen, named)) as upstream,
        serving(GatewayApp(upstream, enforce=enforce)) as url,
    ):
        sent = {**HEADERS, "connection": "keep-alive, X-Up", "x-up": "secret", "x-other": "1"}
        answer = post(url, CALL, sent)
    assert answer.status_code == 200
    assert b"x-up" not in seen[0] and seen[0][b"x-other"] == b"1"
    assert "x-down" not in answer.headers and answer.headers["x-kept"] == "1"


def test_allowed_hosts_and_origins_admit_what_they_name_and_get_cors_headers() -> None:
    seen: list[dict[bytes, bytes]] = []
    rules = Precheck(allowed_hosts=["gw.example"], allowed_origins=["https://app.example"])
    cors = [(b"access-control-allow-origin", b"*")]  # the upstream's, replaced
    with (
        serving(recording(seen, cors)) as upstream,
        serving(GatewayApp(upstream, precheck=rules)) as url,
    ):
        sent = {**HEADERS, "host": "gw.example:8443", "origin": "https://app.example"}
        admitted = post(url, CALL, sent)
        loopback = post(url, CALL)  # allowed_hosts given: the loopback name is not one
    assert admitted.status_code == 200 and seen[0][b"host"] == b"gw.example:8443"
    assert admitted.headers.get_list("access-control-allow-origin") == ["https://app.example"]
    assert loopback.status_code == 421 and len(seen) == 1


# -- the app called directly: a client that never ends its body ---------------------------


async def called(app: GatewayApp, scope: dict[str, Any], chunks: list[bytes]) -> list[Any]:
    """What ``app`` sends for an HTTP request whose body is ``chunks``,
    more of it never coming once they are taken."""
    sent: list[Any] = []
    messages = [{"type": "http.request", "body": c, "more_body": True} for c in chunks]
    never = asyncio.Event()

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop(0)
        await never.wait()
        raise AssertionError("unreachable")

    async def send(message: Message) -> None:
        sent.append(message)

    await asyncio.wait_for(app(scope, receive, send), 10)
    return sent


def scope_of(headers: dict[str, str]) -> dict[str, Any]:
    return {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "query_string": b"",
        "headers": [(k.encode(), v.encode()) for k, v in headers.items()],
        "server": ("127.0.0.1", 3000),
    }


def refusing_client(seen: list[httpx.Request]) -> httpx.AsyncClient:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(500)

    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


@pytest.mark.parametrize("enforce", [False, True])
def test_a_body_not_finished_in_time_is_408_and_not_forwarded(enforce: bool) -> None:
    seen: list[httpx.Request] = []
    app = GatewayApp(NOWHERE, enforce=enforce, client=refusing_client(seen), body_seconds=0.05)
    headers = {**HEADERS, "host": "127.0.0.1:3000"}
    start, body = asyncio.run(called(app, scope_of(headers), [b'{"jsonrpc":']))
    assert start["status"] == 408 and seen == []
    assert json.loads(body["body"])["error"]["message"].startswith("Request Timeout")


def test_a_content_length_of_thousands_of_digits_is_413() -> None:
    seen: list[httpx.Request] = []
    app = GatewayApp(NOWHERE, client=refusing_client(seen))
    headers = {**HEADERS, "host": "127.0.0.1:3000", "content-length": "9" * 5000}
    start, _ = asyncio.run(called(app, scope_of(headers), []))
    assert start["status"] == 413 and seen == []


# -- the era, read from the body ----------------------------------------------------------

OPENED = {"content-type": "application/json", "accept": HEADERS["accept"]}


def test_the_era_of_a_post_is_read_from_its_body_where_a_bridge_waits() -> None:
    # A call whose _meta names 2026-07-28 is stateless without its
    # MCP-Protocol-Version header (era_of), which a reading of the headers
    # alone would send to the bridge; initialize goes to the bridge.
    seen: list[dict[bytes, bytes]] = []
    served = Served(stateless=("2026-07-28",), handshake=False, capabilities={"tools": {}})
    headers = {k: v for k, v in HEADERS.items() if k != "mcp-protocol-version"}
    with serving(recording(seen)) as upstream, serving(GatewayApp(upstream, served=served)) as url:
        forwarded = post(url, CALL, headers)
        bridged = post(url, INITIALIZE, OPENED)
    assert forwarded.status_code == 200 and forwarded.json() == ANSWER
    assert b"mcp-protocol-version" not in seen[0]  # as the client sent it
    assert (
        bridged.status_code == 200 and bridged.json()["result"]["protocolVersion"] == "2025-11-25"
    )
    assert [s.get(b"mcp-method") for s in seen] == [b"tools/call", b"server/discover"]


def test_the_bridge_admits_the_hosts_and_origins_the_gateway_admits() -> None:
    seen: list[dict[bytes, bytes]] = []
    served = Served(stateless=("2026-07-28",), handshake=False, capabilities={"tools": {}})
    rules = Precheck(allowed_hosts=["gw.example"], allowed_origins=["https://app.example"])
    sent = {**OPENED, "host": "gw.example", "origin": "https://app.example"}
    with (
        serving(recording(seen)) as upstream,
        serving(GatewayApp(upstream, served=served, precheck=rules)) as url,
    ):
        answer = post(url, INITIALIZE, sent)
    assert answer.status_code == 200 and answer.json()["result"]["protocolVersion"] == "2025-11-25"
    assert answer.headers["access-control-allow-origin"] == "https://app.example"


def counting_prechecks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths of every precheck run from now on (any door's: they share `Precheck`)."""
    runs: list[str] = []
    real = Precheck._check

    def counted(self: Precheck, method: str, path: str, received: Any, server: object) -> Any:
        runs.append(path)
        return real(self, method, path, received, server)

    monkeypatch.setattr(Precheck, "_check", counted)
    return runs


def test_a_request_handed_to_the_handshake_front_is_prechecked_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    served = Served(stateless=("2026-07-28",), handshake=False, capabilities={"tools": {}})
    seen: list[dict[bytes, bytes]] = []
    with serving(recording(seen)) as upstream, serving(GatewayApp(upstream, served=served)) as url:
        runs = counting_prechecks(monkeypatch)
        bridged = post(url, INITIALIZE, OPENED)
    assert bridged.status_code == 200 and bridged.json()["result"]["protocolVersion"]
    assert runs == ["/mcp"]  # the gateway's; the bridge's endpoint takes its facts


def test_a_bridged_body_past_the_validators_bound_is_413_at_the_gateway() -> None:
    served = Served(stateless=("2026-07-28",), handshake=False, capabilities={"tools": {}})
    app = GatewayApp(NOWHERE, served=served, validator=ExchangeValidator(max_body=64))
    headers = {**OPENED, "host": "127.0.0.1:3000"}
    start, body = asyncio.run(called(app, scope_of(headers), [json.dumps(INITIALIZE).encode()]))
    assert start["status"] == 413
    assert "at most 64 bytes" in json.loads(body["body"])["error"]["message"]
