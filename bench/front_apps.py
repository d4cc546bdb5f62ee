"""The two ASGI apps ``bench.front`` serves beside the official server and the
example (``python -m uvicorn bench.front_apps:minimal``, ``...:bare``).

``minimal`` is the least a user writes: one `Endpoint` with one ``echo`` tool
and default options (every message validated both ways), in the package's
`App`. ``bare`` is the server's floor: it drains the body and answers a fixed
JSON-RPC result, so the gap between the two is the package's own cost.
"""

from __future__ import annotations

from mcp_schema import v2026_07_28 as mcp
from mcp_schema.http import Endpoint
from mcp_schema.http.asgi import App, Receive, Scope, Send
from mcp_schema.session import Event, RequestReceived, ServerSession

TEXT = {"type": "object", "properties": {"text": {"type": "string"}}}
ECHO = {"name": "echo", "description": "Say it back", "inputSchema": TEXT}


def serve(session: ServerSession, event: Event) -> None:
    if not isinstance(event, RequestReceived):
        return
    call = event.message
    if isinstance(call, mcp.ListToolsRequest):
        session.respond(event, {"tools": [ECHO]})
    elif isinstance(call, mcp.CallToolRequest) and call.params.name == "echo":
        said = str((call.params.arguments or {}).get("text"))
        session.respond(event, {"content": [{"type": "text", "text": said}]})


minimal = App(
    Endpoint(serve, info={"name": "bench-minimal", "version": "1"}, capabilities={"tools": {}})
)

_ANSWER = b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello"}]}}'
_HEADERS = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(_ANSWER))]


async def bare(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] != "http":  # lifespan: nothing to start (uvicorn goes on without)
        return
    more = True
    while more:
        more = (await receive()).get("more_body", False)
    await send({"type": "http.response.start", "status": 200, "headers": _HEADERS})
    await send({"type": "http.response.body", "body": _ANSWER})
