"""`Link`: one stdio child of the gateway's stdio front
(`mcp_schema.gateway.monitor.stdio.StdioGatewayApp`) and the requests waiting on it
(`Waiter`), routing each line the child writes to the request it belongs
to. A handshake-era session's child passes lines unchanged; on the shared
child of 2026-07-28 requests, each request's id and progress token are the
gateway's (so two clients both using id 1 never collide) and are put back
in what answers it."""

from __future__ import annotations

import asyncio
import json
from time import monotonic
from typing import TYPE_CHECKING, Any

import jiter

from mcp_schema._codec.route import IdKey, id_key
from mcp_schema.errors import ParseError
from mcp_schema.gateway.child import Child
from mcp_schema.gateway.monitor.exchange import Exchange
from mcp_schema.proxy.lines import Line, OverlongLine
from mcp_schema.subscriptions import SUBSCRIPTION_ID_KEY

if TYPE_CHECKING:
    from mcp_schema.gateway.monitor.stdio import StdioGatewayApp

__all__ = ["MAX_QUEUED", "Item", "Link", "Waiter"]

MAX_QUEUED = 1024
"""Messages of the child (but the response) waiting for one client to read them, at most."""

_LOG = "notifications/message"
_CANCELLED = "notifications/cancelled"
_PROGRESS = "notifications/progress"
Item = tuple[bytes, bool]
"""A message for a waiting request: its bytes, and whether it is the response."""


class Waiter:
    """One request (or GET stream) waiting for what the child sends it."""

    __slots__ = ("client_id", "exchange", "logs", "queue", "token")

    def __init__(self, exchange: Exchange, client_id: Any, token: Any, logs: bool) -> None:
        self.exchange, self.client_id, self.token, self.logs = exchange, client_id, token, logs
        self.queue: asyncio.Queue[Item | None] = asyncio.Queue()  # None: the child is gone


class Link:
    """One child and what waits on it: a session's (``session``), or the shared
    child of 2026-07-28 requests (``session`` None: ids are remapped)."""

    def __init__(
        self, app: StdioGatewayApp, session: str | None, child: Child | None = None
    ) -> None:
        self.app, self.session = app, session
        if child is None:
            child = Child(app.command, self._line, self._exited, max_line_bytes=app.max_line_bytes)
        else:  # running already (the probe's)
            child.on_line, child.on_exit = self._line, self._exited
        self.child = child
        self.pending: dict[IdKey, Waiter] = {}
        self.tokens: dict[IdKey, Waiter] = {}  # progress tokens (the gateway's on the shared child)
        self.stream: Waiter | None = None  # the session's GET stream
        self.active = monotonic()
        """When either side last said something here (`StdioGatewayApp.round_seconds`)."""
        self._next = 0

    def gateway_id(self) -> int:
        self._next += 1
        return self._next

    def _line(self, line: Line) -> None:
        self.active = monotonic()
        if isinstance(line, OverlongLine):
            return self.app.findings.found(
                f"Parse error: a line of {line.size:,} bytes is longer than the limit of "
                f"{self.app.max_line_bytes:,}; not read",
                line.head,
                ParseError.code,
            )
        try:  # only to route it: the exchange it goes to reads it by the codec
            value = jiter.from_json(line)
        except ValueError:
            message = "Parse error: the server wrote a line that is not JSON"
            return self.app.findings.found(message, line, ParseError.code)
        if not isinstance(value, dict):
            return self.app.findings.found(
                "Invalid Request: the server wrote no JSON-RPC message", line
            )
        self._route(value, line)

    def _route(self, value: dict[str, Any], line: bytes) -> None:
        shared = self.session is None
        if "method" not in value:  # a response
            rid = value.get("id")
            waiter = self.pending.pop(_key(rid), None) if _is_id(rid) else None
            if waiter is None:
                return self.app.findings.found(
                    "Invalid Request: a response to no request in flight", line
                )
            self._forget_token(waiter)
            if shared:
                line = _encoded({**value, "id": waiter.client_id})
            waiter.queue.put_nowait((line, True))
            return
        params = value.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        token = params.get("progressToken") if isinstance(params, dict) else None
        waiter = None
        if _is_id(token) and _key(token) in self.tokens:
            waiter = self.tokens[_key(token)]
            if shared and isinstance(params, dict):
                line = _encoded({**value, "params": {**params, "progressToken": waiter.token}})
        elif shared and isinstance(meta, dict) and _is_id(meta.get(SUBSCRIPTION_ID_KEY)):
            waiter = self.pending.get(_key(meta[SUBSCRIPTION_ID_KEY]))
            if waiter is not None:
                assert isinstance(params, dict)
                meta = {**meta, SUBSCRIPTION_ID_KEY: waiter.client_id}
                line = _encoded({**value, "params": {**params, "_meta": meta}})
        elif shared:
            # A log line names no request: it is one client's only when exactly
            # one request in flight asked for logs; else no client may read it.
            asking = [w for w in self.pending.values() if w.logs]
            waiter = asking[0] if len(asking) == 1 and value["method"] == _LOG else None
            if waiter is None and value["method"] == _LOG:
                self.app.unrouted_logs += 1
        else:
            waiter = self.stream or next(reversed(self.pending.values()), None)
        if waiter is None:
            return self.app.findings.found(
                f"Invalid Request: {value['method']!r:.80} from the server belongs to no "
                "request in flight; not forwarded",
                line,
            )
        if waiter.queue.qsize() >= MAX_QUEUED:  # its client reads slower than the child writes
            return self.app.findings.found(
                f"Invalid Request: more than {MAX_QUEUED:,} messages wait for one client; "
                "not forwarded",
                line,
            )
        waiter.queue.put_nowait((line, False))

    def waiting(self, exchange: Exchange, value: dict[str, Any]) -> Waiter:
        """Register the request ``value`` (its id and token remapped in place on the shared child)."""
        params = value.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        logs = isinstance(meta, dict) and "io.modelcontextprotocol/logLevel" in meta
        waiter = Waiter(exchange, value["id"], token, logs)
        if self.session is None:
            gid = self.gateway_id()
            value["id"] = gid
            self.pending[_key(gid)] = waiter
            if token is not None:
                assert isinstance(params, dict) and isinstance(meta, dict)
                mine = f"gw-{gid}"
                value["params"] = {**params, "_meta": {**meta, "progressToken": mine}}
                self.tokens[_key(mine)] = waiter
        else:
            self.pending[_key(value["id"])] = waiter
            if _is_id(token):
                self.tokens[_key(token)] = waiter
        return waiter

    def foreign(self, value: dict[str, Any]) -> str | None:
        """Why the client's ``value`` (a notification, or an answer) may not
        reach the shared child, or None. Every request there is renumbered,
        so an id or a progress token a client names is the gateway's, and
        may be another client's request: a cancel (in 2026-07-28 the closed
        stream is the cancel, `abandon`), a progress token, or an answer to
        a request the shared child never sent a client. A session's own
        child hears its client's ids: they are all its own."""
        if self.session is not None:
            return None
        method = value.get("method")
        if method is None:
            return "an answer to no request the shared child sent this client"
        params = value.get("params")
        if (
            method == _CANCELLED
            or method == _PROGRESS
            or (isinstance(params, dict) and "requestId" in params)
        ):
            return f"{method!r:.80} names a request of the shared child, not its own"
        return None

    def frame(self, body: bytes, value: dict[str, Any]) -> bytes:
        """What is written to the child for the client's ``body`` (``value``
        parsed): the bytes as they came in a session, re-encoded on the
        shared child (its id and token remapped)."""
        return body if self.session is not None else _encoded(value)

    def abandon(self, waiter: Waiter) -> None:
        """``waiter``'s client left: forgotten (on the shared child, its request cancelled)."""
        for key, found in list(self.pending.items()):
            if found is waiter:
                del self.pending[key]
                self._forget_token(waiter)
                if self.session is None:  # tell the child, as stdio cancels
                    note = {
                        "jsonrpc": "2.0",
                        "method": _CANCELLED,
                        "params": {"requestId": key[1]},
                    }
                    self.child.send(_encoded(note))

    def _forget_token(self, waiter: Waiter) -> None:
        for token in [t for t, w in self.tokens.items() if w is waiter]:
            del self.tokens[token]

    def _exited(self) -> None:
        for waiter in [*self.pending.values(), *filter(None, [self.stream])]:
            waiter.queue.put_nowait(None)
        self.pending.clear()
        self.tokens.clear()
        self.app.gone(self)


def _key(rid: Any) -> IdKey:
    return id_key(rid)


def _is_id(value: object) -> bool:
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def _encoded(value: dict[str, Any]) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()
