"""What the server layer's tests drive: a `Server`'s handler on a bare
`ServerSession` (either era, in memory), and a replica's app
(`Server.asgi`) whose endpoint takes 2026-07-28 POSTs."""

from __future__ import annotations

import json
from typing import Any

from mcp_schema.codec import encode
from mcp_schema.http import Endpoint
from mcp_schema.server import Server
from mcp_schema.session import ServerSession
from mcp_schema.versions import TASKS_EXTENSION
from tests.tasks.serving import BASE as BASE
from tests.tasks.serving import post as post

VERSION = "2026-07-28"
HANDSHAKE = "2025-11-25"
ASKABLE: dict[str, Any] = {"elicitation": {}, "sampling": {}}
DECLARING: dict[str, Any] = {**ASKABLE, "extensions": {TASKS_EXTENSION: {}}}


def meta(capabilities: dict[str, Any] = ASKABLE, **more: Any) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        **more,
    }


def message(
    method: str,
    params: dict[str, Any] | None = None,
    capabilities: dict[str, Any] = ASKABLE,
    id: int = 7,
    **more: Any,
) -> dict[str, Any]:
    """A 2026-07-28 request (``more``: further ``_meta`` members)."""
    return {
        "jsonrpc": "2.0",
        "id": id,
        "method": method,
        "params": {**(params or {}), "_meta": meta(capabilities, **more)},
    }


class Stateless:
    """``server``'s handler serving each 2026-07-28 request with a session
    of its own, as the endpoint does (no sealer: the rounds wait in one
    session kept for the test's retries)."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.session = ServerSession(
            info=server.info, capabilities=server.capabilities, handler_version=VERSION
        )

    def send(self, value: dict[str, Any]) -> list[dict[str, Any]]:
        """Every frame the session sent for ``value``."""
        for event in self.session.receive(encode(value)):
            self.server.handler(self.session, event)
        return [json.loads(frame) for frame in self.session.data_to_send()]

    async def asend(self, value: dict[str, Any]) -> list[dict[str, Any]]:
        """`send`, in an event loop: the handler's coroutine awaited (`Server.handle`)."""
        for event in self.session.receive(encode(value)):
            await self.server.handle(self.session, event)
        return [json.loads(frame) for frame in self.session.data_to_send()]

    def result(self, method: str, params: dict[str, Any] | None = None, **options: Any) -> Any:
        """The result of the request (the test fails on an error)."""
        (answer,) = [f for f in self.send(message(method, params, **options)) if "id" in f]
        assert "result" in answer, answer
        return answer["result"]

    def call(self, name: str, **arguments: Any) -> dict[str, Any]:
        result: dict[str, Any] = self.result("tools/call", {"name": name, "arguments": arguments})
        return result


def text(result: dict[str, Any]) -> str:
    """The text of a result's first content block."""
    content = result.get("content") or result.get("messages", [{}])[0].get("content")
    block = content[0] if isinstance(content, list) else content
    return str(block["text"])


class Handshake:
    """``server``'s handler in an ``initialize`` session of ``version``."""

    def __init__(
        self, server: Server, capabilities: dict[str, Any] = ASKABLE, version: str = HANDSHAKE
    ) -> None:
        self.server = server
        self.session = ServerSession(
            info=server.info, capabilities=server.capabilities, handler_version=VERSION
        )
        init = {"protocolVersion": version, "capabilities": capabilities}
        init["clientInfo"] = {"name": "test", "version": "1"}
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, value: dict[str, Any]) -> list[dict[str, Any]]:
        for event in self.session.receive(encode(value)):
            self.server.handler(self.session, event)
        return [json.loads(frame) for frame in self.session.data_to_send()]


def replica(server: Server, **settings: Any) -> Endpoint:
    """The endpoint of ``server.asgi`` (no environment read)."""
    endpoint: Endpoint = server.asgi(env={}, **settings).endpoint
    return endpoint
