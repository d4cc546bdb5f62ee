"""The gateway in monitor mode, traced: a server span for the client's
request, a client span for the call upstream, the upstream's server span
its child (the forwarded ``_meta.traceparent`` rewritten, every other byte
of the body as the client sent it), in both eras."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

import httpx
import pytest
from opentelemetry.trace import SpanKind, format_span_id, format_trace_id

from mcp_schema.gateway.monitor.asgi import GatewayApp
from mcp_schema.server import Server
from mcp_schema.telemetry import forwarded
from mcp_schema.telemetry import splice as scanning
from mcp_schema.telemetry.propagation import inject
from tests.gateway.test_gateway import serving
from tests.telemetry.conftest import Recorded

STATELESS = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def upstream(recorded: Recorded) -> Any:
    server = Server("upstream")

    @server.tool()
    def echo(text: str) -> str:
        """``text`` back."""
        return text

    return server.asgi(env={}, telemetry=recorded.telemetry)


def traced_call(recorded: Recorded, params: dict[str, Any], id: int) -> tuple[bytes, Any]:
    """A tools/call body carrying a client span's context in ``_meta``."""
    from opentelemetry.trace import set_span_in_context

    client = recorded.telemetry.client_operation("tools/call", request_id=id, params=params)
    meta = dict(params.get("_meta", {}))
    inject(meta, set_span_in_context(client.span))
    value = {
        "jsonrpc": "2.0",
        "id": id,
        "method": "tools/call",
        "params": {**params, "_meta": meta},
    }
    return json.dumps(value, separators=(", ", ": ")).encode(), client


def chain(recorded: Recorded, client: Any) -> list[Any]:
    """The spans of ``client``'s trace, each the parent of the next."""
    trace_id = client.span.get_span_context().trace_id
    spans = [s for s in recorded.spans() if s.context.trace_id == trace_id]
    ordered = [
        next(s for s in spans if s.context.span_id == client.span.get_span_context().span_id)
    ]
    while child := [
        s for s in spans if s.parent and s.parent.span_id == ordered[-1].context.span_id
    ]:
        assert len(child) == 1, child
        ordered.append(child[0])
    return ordered


def test_one_trace_from_client_through_the_gateway_to_the_upstream_stateless(
    recorded: Recorded,
) -> None:
    with (
        serving(upstream(recorded)) as url,
        serving(GatewayApp(url, telemetry=recorded.telemetry)) as gateway,
    ):
        params = {"name": "echo", "arguments": {"text": "hi"}, "_meta": STATELESS}
        body, client = traced_call(recorded, params, 7)
        headers = {
            **HEADERS,
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/call",
            "mcp-name": "echo",
        }
        answer = httpx.post(gateway, content=body, headers=headers, timeout=10)
        client.end()
    assert answer.status_code == 200, answer.text
    spans = chain(recorded, client)
    assert [s.kind for s in spans] == [
        SpanKind.CLIENT,  # the client's
        SpanKind.SERVER,  # the gateway's, for the client's request
        SpanKind.CLIENT,  # the gateway's, for its call upstream
        SpanKind.SERVER,  # the upstream's
    ]
    assert all(s.name == "tools/call echo" for s in spans[1:])
    gateway_server = dict(spans[1].attributes or {})
    assert gateway_server["mcp_schema.era"] == "stateless"
    assert gateway_server["client.address"] == "127.0.0.1"
    assert dict(spans[2].attributes or {})["server.address"] == "127.0.0.1"


def test_one_trace_through_the_gateway_in_the_handshake_era(recorded: Recorded) -> None:
    with (
        serving(upstream(recorded)) as url,
        serving(GatewayApp(url, telemetry=recorded.telemetry)) as gateway,
    ):
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "c", "version": "1"},
            },
        }
        opened = httpx.post(gateway, json=init, headers=HEADERS, timeout=10)
        session = {"mcp-session-id": opened.headers["mcp-session-id"]}
        session["mcp-protocol-version"] = "2025-11-25"
        done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        httpx.post(gateway, json=done, headers={**HEADERS, **session}, timeout=10)
        params = {"name": "echo", "arguments": {"text": "hi"}}
        body, client = traced_call(recorded, params, 8)
        answer = httpx.post(gateway, content=body, headers={**HEADERS, **session}, timeout=10)
        client.end()
    assert answer.status_code == 200, answer.text
    spans = chain(recorded, client)
    assert [s.kind for s in spans] == [
        SpanKind.CLIENT,
        SpanKind.SERVER,
        SpanKind.CLIENT,
        SpanKind.SERVER,
    ]
    assert dict(spans[1].attributes or {})["mcp_schema.era"] == "handshake"


def test_the_forwarded_body_changes_only_in_its_traceparent(
    recorded: Recorded, monkeypatch: pytest.MonkeyPatch
) -> None:
    received: list[bytes] = []
    scanned: list[bytes] = []

    def splice(body: bytes, values: Mapping[str, str]) -> bytes:
        scanned.append(body)
        return scanning.splice(body, values)

    monkeypatch.setattr(forwarded, "splice", splice)

    async def upstream_app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        received.append(body)
        answer = json.dumps({"jsonrpc": "2.0", "id": 9, "result": {"content": []}}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"application/json")],
            }
        )
        await send({"type": "http.response.body", "body": answer})

    with (
        serving(upstream_app) as url,
        serving(GatewayApp(url, telemetry=recorded.telemetry)) as gateway,
    ):
        params = {"name": "echo", "arguments": {"text": "h\u00e9"}, "_meta": STATELESS}
        body, client = traced_call(recorded, params, 9)
        headers = {
            **HEADERS,
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/call",
            "mcp-name": "echo",
        }
        httpx.post(gateway, content=body, headers=headers, timeout=10)
        untraced = json.dumps(
            {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params}
        ).encode()
        httpx.post(gateway, content=untraced, headers=headers, timeout=10)
        client.end()
    traced, plain = received
    assert plain == untraced  # no _meta.traceparent: the very bytes (the context is in a header)
    assert scanned == [body]  # and that body was never scanned
    gateway_client = next(
        s
        for s in recorded.spans()
        if s.kind == SpanKind.CLIENT
        and s.parent is not None
        and s.context.trace_id == client.span.get_span_context().trace_id
    )
    context = gateway_client.context
    ours = f"00-{format_trace_id(context.trace_id)}-{format_span_id(context.span_id)}"
    ours += f"-{context.trace_flags:02x}"
    sent = json.loads(body)["params"]["_meta"]["traceparent"]
    assert traced == body.replace(sent.encode(), ours.encode())


def test_the_gateway_names_the_tools_its_upstream_listed(recorded: Recorded) -> None:
    plain = Server("upstream")

    @plain.tool()
    def echo(text: str) -> str:
        """``text`` back."""
        return text

    telemetry = recorded.fresh()  # declares nothing: a gateway knows no tool of its own
    headers = {**HEADERS, "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call"}
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "hi"}, "_meta": STATELESS},
    }
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": STATELESS}}

    async def run(url: str) -> None:
        app = GatewayApp(url, telemetry=telemetry)
        transport = httpx.ASGITransport(app, client=("127.0.0.1", 5555))
        try:
            async with httpx.AsyncClient(transport=transport, timeout=10) as http:
                named = {**headers, "mcp-name": "echo"}
                for body, sent in (
                    (call, named),
                    (listing, {**headers, "mcp-method": "tools/list"}),
                ):
                    answer = await http.post("http://127.0.0.1/mcp", json=body, headers=sent)
                    assert answer.status_code == 200, answer.text
                answer = await http.post("http://127.0.0.1/mcp", json=call, headers=named)
                assert answer.status_code == 200, answer.text
        finally:
            await app.aclose()

    with serving(plain.asgi(env={}, telemetry=False)) as url:
        asyncio.run(run(url))
    gateway_server = [s.name for s in recorded.spans() if s.kind is SpanKind.SERVER]
    assert gateway_server == ["tools/call _OTHER", "tools/list", "tools/call echo"]
    assert telemetry.tools == {"echo"}
