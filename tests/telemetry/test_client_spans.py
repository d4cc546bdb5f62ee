"""A client session's span of each request it sends, its context carried to
the server in ``params._meta``: one trace across both sessions."""

from __future__ import annotations

from opentelemetry.trace import SpanKind

from mcp_schema.session import ClientSession, RequestReceived, ServerSession
from tests.telemetry.conftest import Recorded

INFO = {"name": "c", "version": "1"}


def exchange(client: ClientSession, server: ServerSession) -> list[RequestReceived]:
    """Carry the client's frames to the server and the answers back."""
    requests = []
    for frame in client.frames_to_send():
        requests += [e for e in server.receive(frame.data) if isinstance(e, RequestReceived)]
    return requests


def carry_back(client: ClientSession, server: ServerSession) -> None:
    for frame in server.frames_to_send():
        client.receive(frame.data)


def test_one_trace_from_client_span_to_server_span(recorded: Recorded) -> None:
    client = ClientSession(info=INFO, telemetry=recorded.telemetry)
    server = ServerSession(info=INFO, capabilities={"tools": {}}, telemetry=recorded.telemetry)
    client.discover()
    exchange(client, server)
    carry_back(client, server)
    recorded.exporter.clear()
    params = {"name": "echo", "arguments": {}}
    client.request("tools/call", params)
    (request,) = exchange(client, server)
    server.respond(request, {"content": [], "isError": True})
    carry_back(client, server)
    server_span, client_span = recorded.spans()
    assert (client_span.kind, server_span.kind) == (SpanKind.CLIENT, SpanKind.SERVER)
    assert client_span.name == server_span.name == "tools/call echo"
    assert server_span.parent is not None
    assert server_span.parent.span_id == client_span.context.span_id
    assert server_span.context.trace_id == client_span.context.trace_id
    assert (
        client_span.attributes is not None and client_span.attributes["error.type"] == "tool_error"
    )
    assert params == {"name": "echo", "arguments": {}}  # the author's mapping is untouched
    methods = {
        p.attributes["mcp.method.name"] for p in recorded.points("mcp.client.operation.duration")
    }
    assert methods == {"server/discover", "tools/call"}


def test_a_request_given_up_ends_its_span_as_cancelled(recorded: Recorded) -> None:
    client = ClientSession(info=INFO, telemetry=recorded.telemetry)
    rid = client.initialize()
    client.cancel(rid)
    (span,) = recorded.spans()
    assert span.attributes is not None and span.attributes["error.type"] == "cancelled"
