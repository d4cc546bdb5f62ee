"""The gateway's relay of an upstream's event stream: every event checked
by the request's `Exchange`, the stream passed on as it comes in monitor
mode, and event by event in enforce mode, where the first invalid event ends
it with the error that refuses it (`mcp_schema.gateway.monitor.asgi`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp_schema.gateway.monitor.exchange import Exchange, bad_gateway
from mcp_schema.gateway.monitor.sse import EventSplitter
from mcp_schema.http.adapter import Message, Send, send_body, sse_event
from mcp_schema.http.pool import StreamedResponse

if TYPE_CHECKING:
    from mcp_schema.gateway.monitor.asgi import GatewayApp

__all__ = ["relay_events"]


async def relay_events(
    app: GatewayApp, exchange: Exchange, response: StreamedResponse, start: Message, send: Send
) -> None:
    """``app``'s upstream answered with an event stream: relayed as it comes
    (monitor) or event by event, each checked first (enforce)."""
    splitter = EventSplitter(app.validator.max_message)
    await send(start)
    while chunk := await response.receive():
        app._traffic(len(chunk))
        if not app.enforce:
            await send_body(send, chunk, more=True)
        for event in splitter.feed(chunk):
            report = exchange.event(event)
            if report is None:
                if app.enforce:
                    await send_body(send, event.raw, more=True)
                continue
            app._report([report])
            if app.enforce:
                refused = bad_gateway(report, exchange.request_id).body
                return await send_body(send, sse_event(refused))
    last_event = splitter.close()
    if last_event is not None:
        report = exchange.event(last_event)
        if report is not None:
            app._report([report])
        if app.enforce and not last_event.overlong:
            await send_body(send, last_event.raw, more=True)
    await send_body(send, b"")
