"""The handlers of ``examples/server.py`` over Streamable HTTP, both eras on
one endpoint, as an ASGI application for any ASGI server:
``python -m uvicorn --app-dir examples http_server:app --port 3001`` serves
``http://127.0.0.1:3001/mcp``.

Nothing here is glue but the endpoint's options: the same
``serve(session, event)`` answers a stateless 2026-07-28 request (with a
session built for it alone) and the requests of an ``initialize`` session
(``Mcp-Session-Id``), whose ``ask`` goes to the client on the request's
event stream.

With ``MCP_REDIS_URL`` set (``redis://127.0.0.1:6379/0``), it is one
replica of many: the session records and the forwarding between replicas go
through Redis, so any replica serves any session (``docs/guide/serving.md``,
Deployment). Unset, everything stays in this process.

A 2026-07-28 ``ask`` (tools ``ask`` and ``think``) seals its round into the
``requestState`` under ``MCP_STATE_KEY`` (at least 32 bytes; ``new,old``
while rotating), so its retry completes on any replica given the same key.
Unset, a random key serves this one process."""

import os
import runpy
import secrets
from pathlib import Path
from typing import Any

from mcp_schema import v2026_07_28 as mcp
from mcp_schema.http import Endpoint, Handler
from mcp_schema.http.asgi import App
from mcp_schema.http.forward import ClusterApp
from mcp_schema.http.shared_sessions import BrokerSessions
from mcp_schema.request_state import StateKeys, StateSealer

serve: Handler = runpy.run_path(str(Path(__file__).with_name("server.py")))["serve"]
CAPABILITIES: dict[str, Any] = {"tools": {}, "resources": {}, "prompts": {}, "logging": {}}
INFO = {"name": "example-http-server", "version": "1.0.0"}


def sealer(key: str | None) -> StateSealer:
    """The sealer of ``MCP_STATE_KEY``; a key too short stops the server at start-up."""
    try:
        return StateSealer(StateKeys.from_env(key or secrets.token_urlsafe(32)))
    except ValueError as exc:
        raise SystemExit(f"MCP_STATE_KEY: {exc}") from None


def application(redis_url: str | None, state_key: str | None = None) -> App | ClusterApp:
    """One replica: sessions in this process, or shared through Redis."""
    sessions = None
    if redis_url:
        from mcp_schema.redis_broker import RedisBroker  # the ``redis`` extra

        sessions = BrokerSessions(RedisBroker.from_url(redis_url))
    options: dict[str, Any] = {"capabilities": CAPABILITIES, "handler_version": mcp.VERSION}
    options["request_state"] = sealer(state_key)
    app = App(Endpoint(serve, info=INFO, sessions=sessions, **options))
    return app if sessions is None else ClusterApp(app)


app = application(os.environ.get("MCP_REDIS_URL"), os.environ.get("MCP_STATE_KEY"))
