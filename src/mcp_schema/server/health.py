"""``/healthz`` and ``/readyz``, routes of the replica's app beside its MCP
endpoint (hand-written runtime module).

* ``GET /healthz`` (liveness): 200 while the process serves at all.
* ``GET /readyz`` (readiness): 200 when it should be sent requests: not
  draining (`mcp_schema.server.app`), and its broker answers within
  `READY_SECONDS` when it has Redis; else 503 saying which.

Both are refused by the endpoint's own `Precheck.caller` rules first, so a
page rebinding its name to a loopback server learns nothing here either
(``Host``: 421; a foreign ``Origin``: 403). ``HEAD`` is answered as ``GET``
without a body, any other method 405. Answers are small JSON objects
(``{"status": "ok"}``), never cached.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

from mcp_schema.broker import Broker, BrokerError
from mcp_schema.http.adapter import Receive, Scope, Send, send_response
from mcp_schema.http.precheck import Precheck
from mcp_schema.http.stream import Response
from mcp_schema.http_headers import received_headers

__all__ = ["HEALTH", "READY", "READY_SECONDS", "Health"]

HEALTH = "/healthz"
READY = "/readyz"
READY_SECONDS = 1.0
"""How long readiness waits for the broker."""

_PROBE_KEY = "mcp-schema/ready"


def _status(status: int, state: str, reason: str | None = None) -> Response:
    body = {"status": state, **({} if reason is None else {"reason": reason})}
    headers = [("content-type", "application/json"), ("cache-control", "no-store")]
    return Response(status, headers, json.dumps(body).encode())


class Health:
    """The two routes (see the module): ``rules`` the endpoint's precheck,
    ``broker`` the shared one (None: nothing to reach), ``draining`` whether
    the replica is stopping."""

    def __init__(
        self, rules: Precheck, broker: Broker | None, draining: Callable[[], bool]
    ) -> None:
        self.rules, self.broker, self.draining = rules, broker, draining

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        received = received_headers(scope["headers"])
        refused = self.rules.caller(received, scope.get("server"))
        if refused is None and scope["method"] not in ("GET", "HEAD"):
            refused = _status(405, "unavailable", "GET or HEAD")
            refused.headers.append(("allow", "GET, HEAD"))
        response = refused or await self._answer(scope["path"])
        if scope["method"] == "HEAD":
            response.body = b""
        await send_response(send, response)

    async def _answer(self, path: str) -> Response:
        if path == HEALTH:
            return _status(200, "ok")
        if self.draining():
            return _status(503, "unavailable", "draining: the replica is stopping")
        if self.broker is not None:
            reached = self.broker.get(_PROBE_KEY)
            try:
                await asyncio.wait_for(reached, READY_SECONDS)
            except (BrokerError, asyncio.TimeoutError):
                return _status(503, "unavailable", "Redis does not answer")
        return _status(200, "ok")
