"""The front door's telemetry: ``telemetry=`` from `Server.asgi` down to the
sessions, the client's address on the server span, the server's on the
client span, and the refusals no session reads counted where they are made."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from opentelemetry.trace import SpanKind

from mcp_schema.http import Endpoint
from mcp_schema.http.asgi import App
from mcp_schema.http.client import HttpClient
from mcp_schema.http_headers import request_headers
from mcp_schema.server import Server
from tests import hostile
from tests.telemetry.conftest import Recorded

VERSION = "2026-07-28"
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def server() -> Server:
    made = Server("demo")

    @made.tool()
    def shout(text: str) -> str:
        """Upper-case ``text``."""
        return text.upper()

    return made


def call(name: str) -> dict[str, Any]:
    return hostile.call(rid=7, name=name, arguments={"text": "hi"})


def headers(value: dict[str, Any], **more: str) -> dict[str, str]:
    return {**HEADERS, **request_headers(value), **more}


def client(app: Any) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, client=("192.0.2.7", 40123))
    return httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1")


@pytest.mark.anyio
async def test_server_asgi_declares_its_tools_and_names_the_client(recorded: Recorded) -> None:
    app = server().asgi(env={}, telemetry=recorded.telemetry)
    async with client(app) as http:
        answer = await http.post("/mcp", json=call("shout"), headers=headers(call("shout")))
    assert answer.status_code == 200, answer.text
    (span,) = [s for s in recorded.spans() if s.kind == SpanKind.SERVER]
    assert span.name == "tools/call shout"  # declared by Server.asgi: recorded as it is
    attributes = dict(span.attributes or {})
    assert (attributes["client.address"], attributes["client.port"]) == ("192.0.2.7", 40123)
    assert attributes["mcp_schema.era"] == "stateless"


@pytest.mark.anyio
async def test_telemetry_false_records_nothing(recorded: Recorded) -> None:
    app = server().asgi(env={}, telemetry=False)
    async with client(app) as http:
        await http.post("/mcp", json=call("shout"), headers=headers(call("shout")))
        await http.post("/elsewhere", json=call("shout"), headers=headers(call("shout")))
    assert recorded.spans() == [] and recorded.points("mcp_schema.refused") == []


def refusals(recorded: Recorded) -> dict[tuple[Any, ...], int]:
    return {
        (
            p.attributes["rpc.response.status_code"],
            p.attributes.get("http.response.status_code"),
            p.attributes["mcp_schema.direction"],
            p.attributes["mcp.method.name"],
        ): p.value
        for p in recorded.points("mcp_schema.refused")
    }


@pytest.mark.anyio
async def test_the_front_doors_refusals_are_counted_by_code_and_status(
    recorded: Recorded,
) -> None:
    app = server().asgi(env={}, telemetry=recorded.telemetry)
    async with client(app) as http:
        hostile = headers(call("shout"), origin="https://evil.example")
        assert (await http.post("/mcp", json=call("shout"), headers=hostile)).status_code == 403
        assert (await http.post("/mcp", content=b"{not json", headers=HEADERS)).status_code == 400
        unknown_era = call("shout")
        unknown_era["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = "2099-01-01"
        assert (
            await http.post("/mcp", json=unknown_era, headers=headers(unknown_era))
        ).status_code == 400
    counted = refusals(recorded)
    assert counted[("-32600", 403, "received", "_OTHER")] == 1
    assert counted[("-32700", 400, "received", "_OTHER")] == 1
    assert sum(v for k, v in counted.items() if k[0] == "-32022") == 1
    assert recorded.spans() == []  # no session read any of them


@pytest.mark.anyio
async def test_an_app_counts_to_its_own_telemetry_over_the_endpoints(recorded: Recorded) -> None:
    endpoint = Endpoint(lambda session, event: None, info={"name": "e", "version": "1"})
    app = App(endpoint, telemetry=recorded.telemetry)
    async with client(app) as http:
        assert (await http.post("/nowhere", json=call("x"), headers=HEADERS)).status_code == 404
    assert refusals(recorded) == {("-32600", 404, "received", "_OTHER"): 1}


@pytest.mark.anyio
async def test_the_http_clients_spans_name_the_server(recorded: Recorded) -> None:
    app = server().asgi(env={}, telemetry=False)
    async with (
        client(app) as http,
        HttpClient(
            "http://mcp.example:8123/mcp",
            info={"name": "c", "version": "1"},
            versions=[VERSION],
            http=http,
            telemetry=recorded.telemetry,
        ) as mcp,
    ):
        await mcp.request("tools/call", {"name": "shout", "arguments": {"text": "a"}})
    spans = [s for s in recorded.spans() if s.kind == SpanKind.CLIENT]
    assert spans and all(
        (s.attributes or {}).get("server.address") == "mcp.example"
        and (s.attributes or {}).get("server.port") == 8123
        for s in spans
    )
