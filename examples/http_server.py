"""The handlers of ``examples/server.py`` over Streamable HTTP, both eras on
one endpoint: ``python examples/http_server.py [PORT]`` serves
``http://127.0.0.1:PORT/mcp`` (port 0: any free one, printed first).

Nothing here is glue but the endpoint's options and the ASGI server: the
same ``serve(session, event)`` answers a stateless 2026-07-28 request (a
session built for it alone) and an ``initialize`` session's requests
(``Mcp-Session-Id``), whose ``ask`` goes to the client on the request's
event stream."""

import socket
import sys

import uvicorn
from server import serve

from mcp_schema import v2026_07_28 as mcp
from mcp_schema.http import Endpoint
from mcp_schema.http.asgi import App

CAPABILITIES = {"tools": {}, "resources": {}, "prompts": {}, "logging": {}}


def app() -> App:
    info = {"name": "example-http-server", "version": "1.0.0"}
    return App(Endpoint(serve, info=info, capabilities=CAPABILITIES, handler_version=mcp.VERSION))


def main() -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", int(sys.argv[1]) if len(sys.argv) > 1 else 3001))
    print(f"listening on http://127.0.0.1:{sock.getsockname()[1]}/mcp", flush=True)
    config = uvicorn.Config(app(), log_level="warning", timeout_graceful_shutdown=5)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
