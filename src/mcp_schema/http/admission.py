"""The front door of `mcp_schema.http.Endpoint` (its base: the endpoint sets
these attributes): the rules every request is checked by before its body
is read (`mcp_schema.http.precheck.Precheck`), then, for a GET or DELETE,
the session it names, which must be the caller's. A session is bound to the
principal that opened it (``initialize``): another principal's request in
it is 404, as for a session that does not exist, so neither its existence
nor anything in it is told."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp_schema.http.caller import Caller
from mcp_schema.http.precheck import Precheck
from mcp_schema.http.rules import refusal
from mcp_schema.http.sessions import LiveSession, SessionStore
from mcp_schema.http.stream import Response
from mcp_schema.http_headers import Headers, received_headers

__all__ = ["Admission"]

# The requests that name a session, which must be the caller's; a POST's
# session is the session layer's to check, once its body is read.
_IN_A_SESSION = ("GET", "DELETE")


class Admission:
    """What `mcp_schema.http.Endpoint` does before it reads a body."""

    rules: Precheck
    handshake: tuple[str, ...]
    sessions: SessionStore

    def precheck(
        self, method: str, path: str, headers: Headers, server: object = None
    ) -> Response | None:
        """The refusal of a request that needs no body to refuse, or None:
        an adapter calls it before reading the body (``server``: the ASGI
        scope's, for the loopback ``Host`` rule of `Precheck`)."""
        return self.precheck_received(method, path, received_headers(headers), server)

    def precheck_received(
        self, method: str, path: str, received: dict[str, str], server: object = None
    ) -> Response | None:
        """`precheck` of headers read already (`received_headers`)."""
        return self.rules.with_cors(received, self._precheck(method, path, received, server))

    def _precheck(
        self,
        method: str,
        path: str,
        received: dict[str, str],
        server: object = None,
        caller: Caller | None = None,
    ) -> Response | None:
        early = self.rules._check(method, path, received, server)
        if early is not None or method not in _IN_A_SESSION:
            return early
        live = self._live(received, caller or self.rules.caller_of(received))
        return live if isinstance(live, Response) else None

    async def admit(
        self, method: str, path: str, received: dict[str, str], scope: Mapping[str, Any]
    ) -> Caller | Response:
        """The front door (`Precheck.admit`: the rules, the protected resource
        metadata and the token, with ``auth``), then the session a GET or
        DELETE names, bound to the caller: the request's `Caller`, or the
        refusal to send (its CORS headers added). ``scope``: the ASGI scope's
        ``server`` and ``client``."""
        return self._bound_caller(
            method, received, await self.rules.admit(method, path, received, scope)
        )

    def _admit_now(
        self, method: str, path: str, received: dict[str, str], scope: Mapping[str, Any]
    ) -> Caller | Response:
        """`admit` without ``auth`` (`Precheck._admit_now`): nothing awaited."""
        admitted = self.rules._admit_now(method, path, received, scope)
        if method not in _IN_A_SESSION:  # a POST, every call's path: no session to bind
            return admitted
        return self._bound_caller(method, received, admitted)

    def _bound_caller(
        self, method: str, received: dict[str, str], admitted: Caller | Response
    ) -> Caller | Response:
        """``admitted``, or the refusal of a GET or DELETE not in its session (`bound`)."""
        if isinstance(admitted, Response) or method not in _IN_A_SESSION:
            return admitted  # a refusal already, or no session to bind
        refused = self.bound(method, received, admitted)
        return admitted if refused is None else refused

    def bound(self, method: str, received: dict[str, str], caller: Caller) -> Response | None:
        """The refusal of a GET or DELETE whose session is not ``caller``'s
        (unknown, terminated, or another principal's: 404), with its CORS
        headers; None for any other request."""
        if method not in _IN_A_SESSION:
            return None
        live = self._live(received, caller)
        return self.rules.with_cors(received, live) if isinstance(live, Response) else None

    def _live(self, received: Mapping[str, str], caller: Caller) -> LiveSession | Response:
        """The live session a GET or DELETE names, or its refusal: another
        principal's session is 404, as an unknown one."""
        session_id = received.get("mcp-session-id")
        if session_id is None or not self.handshake:
            return self.rules.not_allowed("no session named")
        live = self.sessions.get(session_id)
        if live is None or live.server.principal != caller.principal:
            return refusal(404, "Not Found: no such session (unknown or terminated)")
        return live
