"""The handlers of ``examples/server.py`` over Streamable HTTP, both eras on
one endpoint, as an ASGI application for any ASGI server:
``python -m uvicorn --app-dir examples http_server:app --port 3001`` serves
``http://127.0.0.1:3001/mcp``.

Nothing here is glue but the endpoint's options: the same
``serve(session, event)`` answers a stateless 2026-07-28 request (with a
session built for it alone) and the requests of an ``initialize`` session
(``Mcp-Session-Id``), whose ``ask`` goes to the client on the request's
event stream."""

import runpy
from pathlib import Path
from typing import Any

from mcp_schema import v2026_07_28 as mcp
from mcp_schema.http import Endpoint, Handler
from mcp_schema.http.asgi import App

serve: Handler = runpy.run_path(str(Path(__file__).with_name("server.py")))["serve"]
CAPABILITIES: dict[str, Any] = {"tools": {}, "resources": {}, "prompts": {}, "logging": {}}
INFO = {"name": "example-http-server", "version": "1.0.0"}

app = App(Endpoint(serve, info=INFO, capabilities=CAPABILITIES, handler_version=mcp.VERSION))
