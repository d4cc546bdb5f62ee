"""The ASGI apps ``bench.front`` serves beside the official server and the
example (``python -m uvicorn bench.front_apps:minimal``, ``...:bare``,
``...:authorized``).

``minimal`` is the least a user writes: one `Endpoint` with one ``echo`` tool
and default options (every message validated both ways), in the package's
`App`. ``bare`` is the server's floor: it drains the body and answers a fixed
JSON-RPC result, so the gap between the two is the package's own cost.
``authorized`` is ``minimal`` with a `ResourceServer` in its front door,
taking RS256 JWT access tokens of ``bench.front_tokens``' key (its JWKS
read from the file ``BENCH_AUTH_JWKS`` names, as a verifier would fetch it;
without one, a key of its own, which no token is signed with).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from bench.front_tokens import ISSUER, RESOURCE
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


class _Keys:
    """The authorization server's metadata and JWKS, from a file (what a
    `mcp_schema.auth.HttpFetcher` would fetch)."""

    def __init__(self, jwks: bytes) -> None:
        self.jwks = jwks

    async def fetch(
        self,
        url: str,
        *,
        form: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> bytes:
        if url.endswith("/jwks"):
            return self.jwks
        return json.dumps({"issuer": ISSUER, "jwks_uri": ISSUER + "/jwks"}).encode()


def _authorized() -> App:
    from mcp_schema.auth import JwtVerifier, ResourceServer

    named = os.environ.get("BENCH_AUTH_JWKS")
    jwks = Path(named).read_bytes() if named else b'{"keys": []}'
    verifier = JwtVerifier(ISSUER, RESOURCE, fetcher=_Keys(jwks))
    auth = ResourceServer(resource=RESOURCE, verifier=verifier, authorization_servers=[ISSUER])
    info = {"name": "bench-authorized", "version": "1"}
    return App(Endpoint(serve, info=info, capabilities={"tools": {}}, auth=auth))


def __getattr__(name: str) -> App:
    # ``authorized`` is built when uvicorn asks for it: the other rows need no auth extra.
    if name == "authorized":
        return _authorized()
    raise AttributeError(name)


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
