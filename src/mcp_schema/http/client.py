"""`HttpClient`: an MCP client over Streamable HTTP, on asyncio and httpx
(the ``http`` extra: ``pip install 'mcp-schema[http]'``).

A thin layer over the sans-IO `mcp_schema.http.binding.ClientBinding`: it
sends each `Post` the binding makes with httpx, streams the response into
its `Reply` (a request's answer is read as it arrives, never buffered
whole), and turns the session's events into awaitable answers:

* `HttpClient.connect` negotiates (``mode``: ``"auto"``, the default,
  prefers 2026-07-28 and falls back to ``initialize``; ``"stateless"``;
  ``"handshake"``);
* `HttpClient.request` (and `list_tools`, `call_tool`) returns the result
  model, or raises the server's error (an `McpError`, typed by its code) or
  a `mcp_schema.http.binding.TransportError`;
* the server asking for input (an input-required result in 2026-07-28, an
  elicitation, sampling or roots request in a handshake-era session) is
  answered by ``on_input(event)``, whose answers go back as the round's
  retry or as the response to the server's request;
* `HttpClient.listen` iterates over a ``subscriptions/listen`` stream's
  notifications until the caller stops (closing the stream ends it);
* other notifications (progress, logs) go to ``on_notification``.

Nothing here blocks the event loop; one client serves many concurrent
requests. Not thread-safe: use it from one event loop.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any

import httpx
from pydantic import BaseModel

from mcp_schema.base import McpModel
from mcp_schema.capabilities import ASKED_CAPABILITY
from mcp_schema.errors import InvalidRequestError, McpError, clip
from mcp_schema.http.binding import MAX_EVENT, ClientBinding, Mode, Post
from mcp_schema.session import (
    ClientSession,
    Event,
    InputRequested,
    Negotiated,
    NotificationReceived,
    ProtocolError,
    ResponseReceived,
)
from mcp_schema.telemetry.addresses import server_of

if TYPE_CHECKING:
    from mcp_schema.telemetry import Telemetry

__all__ = ["HttpClient", "InputHandler"]

InputHandler = Callable[[InputRequested], Awaitable[Mapping[str, Any]]]
"""What answers the server's asks: ``await on_input(event)`` returns the
answers keyed as ``event.requests`` (result models or wire mappings)."""

_LOG = logging.getLogger("mcp_schema.http")
_LISTEN = "subscriptions/listen"
_QUEUED = 64  # a listen's notifications the caller has not taken: then reading waits


class HttpClient:
    """An MCP client of the Streamable HTTP endpoint at ``url`` (see the module).

    ``info``, ``capabilities``, ``versions``, ``log_level``: the
    `ClientSession`'s. A capability the server may ask with (elicitation,
    sampling, roots) needs ``on_input``. ``headers``: sent with every request.
    ``timeout``: seconds to connect, and between two chunks of a response
    (a listen stream waits as long as it stays open). ``http``: an
    ``httpx.AsyncClient`` of the caller's (kept open by `aclose`).
    ``telemetry``: the session's (`mcp_schema.telemetry.telemetry_for`); its
    client spans name ``url``'s host and port as ``server.address``.
    """

    def __init__(
        self,
        url: str,
        *,
        info: BaseModel | Mapping[str, Any],
        capabilities: BaseModel | Mapping[str, Any] | None = None,
        versions: Collection[str] | None = None,
        mode: Mode = "auto",
        on_input: InputHandler | None = None,
        on_notification: Callable[[NotificationReceived], object] | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = 30.0,
        max_event: int = MAX_EVENT,
        log_level: Any = None,
        http: httpx.AsyncClient | None = None,
        telemetry: Telemetry | bool | None = None,
    ) -> None:
        if not isinstance(url, str):
            raise TypeError(f"url must be a str, not {type(url).__name__}")
        self.session = ClientSession(
            info=info,
            capabilities=capabilities,
            versions=versions,
            log_level=log_level,
            telemetry=telemetry,
        )
        if self.session._observed is not None:
            self.session._observed.server = server_of(url)
        asking = [c for c in ASKED_CAPABILITY.values() if c in self.session.capabilities]
        if asking and on_input is None:
            raise ValueError(f"declaring {', '.join(sorted(set(asking)))} needs on_input")
        self.binding = ClientBinding(self.session, mode, dict(headers or {}), max_event)
        self.url, self.timeout = url, timeout
        self.on_input, self.on_notification = on_input, on_notification
        self._owned = http is None
        self._http = httpx.AsyncClient() if http is None else http
        self._negotiated: asyncio.Future[Negotiated] | None = None
        self._answers: dict[int, asyncio.Future[ResponseReceived]] = {}
        self._listens: dict[int, asyncio.Queue[NotificationReceived | None]] = {}
        self._exchanges: dict[int, asyncio.Task[None]] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> HttpClient:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- calls ---------------------------------------------------------------------------

    async def connect(self) -> Negotiated:
        """Negotiate (once; later calls wait for the same outcome): the
        session's `Negotiated` event, or the server's refusal, raised."""
        if self._negotiated is None:
            self._negotiated = asyncio.get_running_loop().create_future()
            self.binding.connect()
            self._flush()
        return await asyncio.shield(self._negotiated)

    async def request(
        self, method: str, params: BaseModel | Mapping[str, Any] | None = None
    ) -> McpModel:
        """Send ``method`` and wait for its result model (after any input
        rounds); the server's error, or a `TransportError`, is raised."""
        answer = await self._answer(self._sent(method, params))
        if answer.error is not None:
            raise answer.error
        assert answer.result is not None
        return answer.result

    async def list_tools(self, cursor: str | None = None) -> McpModel:
        """``tools/list`` (its tools with invalid ``x-mcp-header`` annotations left out)."""
        return await self.request("tools/list", {} if cursor is None else {"cursor": cursor})

    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> McpModel:
        """``tools/call`` of ``name`` with ``arguments``, its headers mirrored."""
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        return await self.request("tools/call", params)

    async def listen(
        self, params: BaseModel | Mapping[str, Any]
    ) -> AsyncGenerator[NotificationReceived, None]:
        """The notifications of a ``subscriptions/listen`` stream (the
        acknowledgement first), until the caller stops iterating (which closes
        the stream) or the server ends it (its error, if any, raised)."""
        rid = self._sent(_LISTEN, params)
        queue: asyncio.Queue[NotificationReceived | None] = asyncio.Queue(_QUEUED)
        self._listens[rid] = queue
        try:
            while (notification := await queue.get()) is not None:
                yield notification
            answer = await self._answer(rid)
            if answer.error is not None:
                raise answer.error
        finally:
            self._listens.pop(rid, None)
            exchange = self._exchanges.pop(rid, None)
            if exchange is not None:
                exchange.cancel()  # closing the stream ends the listen
            self._answers.pop(rid, None)

    async def aclose(self) -> None:
        """Stop every exchange, end the handshake-era session (DELETE), and
        close the HTTP client if it is the client's own."""
        for task in [*self._tasks]:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        delete = self.binding.close()
        try:
            if delete is not None:
                await self._http.request(
                    delete.method, self.url, headers=list(delete.headers), timeout=self.timeout
                )
        except httpx.HTTPError:
            pass  # the session ends with the server's timeout instead
        finally:
            if self._owned:
                await self._http.aclose()

    # -- the exchanges -------------------------------------------------------------------

    def _sent(self, method: str, params: BaseModel | Mapping[str, Any] | None) -> int:
        if self._negotiated is None or not self._negotiated.done():
            raise RuntimeError("connect() first, and wait for it")
        rid = self.binding.request(method, params)
        self._answers[rid] = asyncio.get_running_loop().create_future()
        self._flush()
        return rid

    async def _answer(self, rid: int) -> ResponseReceived:
        future = self._answers[rid]
        try:
            return await future
        finally:
            self._answers.pop(rid, None)

    def _flush(self) -> None:
        """Each message the session queued, sent in an exchange of its own."""
        for post in self.binding.posts():
            task = asyncio.ensure_future(self._exchange(post))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            if post.request_id is not None:
                self._exchanges[post.request_id] = task
                task.add_done_callback(functools.partial(self._ended, post.request_id))

    def _ended(self, rid: int, task: asyncio.Task[None]) -> None:
        if self._exchanges.get(rid) is task:
            del self._exchanges[rid]

    async def _exchange(self, post: Post) -> None:
        listening = post.rpc_method == _LISTEN
        timeout = httpx.Timeout(self.timeout, read=None if listening else self.timeout)
        try:
            async with self._http.stream(
                post.method,
                self.url,
                headers=list(post.headers),
                content=post.body,
                timeout=timeout,
            ) as response:
                reply = self.binding.reply(
                    post, response.status_code, response.headers.multi_items()
                )
                async for chunk in response.aiter_bytes():
                    await self._dispatch(post, reply.feed(chunk))
                    if reply.done:
                        break
                await self._dispatch(post, reply.end())
        except httpx.HTTPError as exc:
            reason = clip(str(exc)) or type(exc).__name__
            await self._dispatch(post, self.binding.lost(post, reason))
        finally:
            queue = self._listens.get(post.request_id) if post.request_id is not None else None
            if queue is not None:
                await queue.put(None)  # the stream ended: so does the iteration

    async def _dispatch(self, post: Post, events: list[Event]) -> None:
        for event in events:
            if isinstance(event, ResponseReceived):
                self._answered(event)
            elif isinstance(event, Negotiated):
                if self._negotiated is not None and not self._negotiated.done():
                    self._negotiated.set_result(event)
            elif isinstance(event, InputRequested):
                self._spawn(self._provide(event))
            elif isinstance(event, NotificationReceived):
                queue = None if post.request_id is None else self._listens.get(post.request_id)
                if queue is not None:
                    await queue.put(event)  # a caller behind: the stream waits
                elif self.on_notification is not None:
                    self.on_notification(event)
            elif isinstance(event, ProtocolError):
                _LOG.warning("refused from the server: %s", event.error.message)
        self._flush()

    def _answered(self, event: ResponseReceived) -> None:
        future = self._answers.get(event.id) if isinstance(event.id, int) else None
        if future is not None and not future.done():
            future.set_result(event)
        negotiating = self._negotiated is not None and not self._negotiated.done()
        if negotiating and event.method in ("server/discover", "initialize") and event.error:
            assert self._negotiated is not None
            self._negotiated.set_exception(event.error)

    def _spawn(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _provide(self, event: InputRequested) -> None:
        if self.on_input is None:  # asked without a capability declared
            refusal = InvalidRequestError("the server asks for input this client did not declare")
            if isinstance(event.call, int) and event.call in self._answers:
                self._answered(ResponseReceived(event.call, "", None, refusal))
            return
        try:
            answers = await self.on_input(event)
            self.session.provide_input(event, answers)
        except (McpError, ValueError) as exc:
            error = exc if isinstance(exc, McpError) else InvalidRequestError(clip(str(exc)))
            if isinstance(event.call, int):
                self._answered(ResponseReceived(event.call, "", None, error))
            _LOG.warning("input not provided: %s", clip(str(exc)))
        self._flush()
