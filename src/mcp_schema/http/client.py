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
* other notifications (progress, logs) go to ``on_notification``; in a
  handshake-era session the server's own stream (a GET) is opened after
  ``initialize``, and a request's event stream that ends before its answer
  is resumed with ``Last-Event-ID`` (at most three times);
* ``auth``, a `mcp_schema.http.credentials.CredentialSource`, gives the
  ``Authorization`` of every request; `mcp_schema.oauth.OAuth` is one that
  answers the server's 401 and 403 ``insufficient_scope`` challenges by
  authorizing (the request is sent again with the new token, within its
  retry limit); another source is told of a 401 (``rejected``) and the
  request sent once more.

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
from mcp_schema.http.binding import MAX_EVENT, ClientBinding, Mode, Post, Resume, TransportError
from mcp_schema.http.credentials import ChallengedSource, CredentialSource
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

__all__ = ["ChallengedSource", "HttpClient", "InputHandler"]

InputHandler = Callable[[InputRequested], Awaitable[Mapping[str, Any]]]
"""What answers the server's asks: ``await on_input(event)`` returns the
answers keyed as ``event.requests`` (result models or wire mappings)."""


_LOG = logging.getLogger("mcp_schema.http")
_LISTEN = "subscriptions/listen"
_QUEUED = 64  # a listen's notifications the caller has not taken: then reading waits
_MAX_RESUMES = 3  # resumptions of one request's stream that keeps ending early
_MAX_TRIES = 5  # sends of one message after challenges (an OAuth source's own limit is lower)


class HttpClient:
    """An MCP client of the Streamable HTTP endpoint at ``url`` (see the module).

    ``info``, ``capabilities``, ``versions``, ``log_level``: the
    `ClientSession`'s. A capability the server may ask with (elicitation,
    sampling, roots) needs ``on_input``. ``headers``: sent with every request.
    ``auth``: where each request's ``Authorization`` comes from (see the module).
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
        auth: CredentialSource | None = None,
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
        self.binding = ClientBinding(
            self.session, mode, dict(headers or {}), max_event, resumes=True
        )
        self.url, self.timeout, self.auth = url, timeout, auth
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
                headers = await self._authorized(delete)
                await self._http.request(
                    delete.method, self.url, headers=headers, timeout=self.timeout
                )
        except (httpx.HTTPError, McpError):
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

    async def _authorized(self, post: Post) -> list[tuple[str, str]]:
        """``post``'s headers, with the ``Authorization`` of ``auth`` (if any)."""
        headers = list(post.headers)
        authorization = None if self.auth is None else await self.auth.authorization()
        if authorization is not None:
            headers = [(k, v) for k, v in headers if k != "authorization"]
            headers.append(("authorization", authorization))
        return headers

    async def _exchange(self, post: Post) -> None:
        first = post
        try:
            for resumed in range(_MAX_RESUMES + 1):
                resume = await self._send(post)
                if resume is None:
                    return
                await asyncio.sleep(resume.retry)
                again = self.binding.stream(post.request_id, resume.last_event_id)
                if again is None or resumed == _MAX_RESUMES:
                    break
                post = again
            error = TransportError("the stream ended without the answer, resumed in vain")
            await self._dispatch(post, self.binding.refused(post, error))
        except httpx.HTTPError as exc:
            reason = clip(str(exc)) or type(exc).__name__
            await self._dispatch(post, self.binding.lost(post, reason))
        except McpError as exc:  # the authorization failed: the request's answer
            await self._dispatch(post, self.binding.refused(post, exc))
        finally:
            rid = first.request_id
            queue = self._listens.get(rid) if rid is not None else None
            if queue is not None:
                await queue.put(None)  # the stream ended: so does the iteration

    async def _send(self, post: Post) -> Resume | None:
        """One message sent (again after a challenge its source answers) and
        its answer read: how to resume its stream, when it ended early."""
        listening = post.rpc_method == _LISTEN or post.method == "GET"
        timeout = httpx.Timeout(self.timeout, read=None if listening else self.timeout)
        for tries in range(_MAX_TRIES):
            headers = await self._authorized(post)
            sent = dict(headers).get("authorization")
            async with self._http.stream(
                post.method, self.url, headers=headers, content=post.body, timeout=timeout
            ) as response:
                status = response.status_code
                again = tries + 1 < _MAX_TRIES and status in (401, 403)
                if again and await self._challenged(response, sent, tries):
                    continue
                answered = sent is not None and status not in (401, 403)
                if answered and isinstance(self.auth, ChallengedSource):
                    self.auth.settled()
                return await self._read(post, response)
        return None  # unreachable: the last try reads its answer

    async def _challenged(self, response: httpx.Response, sent: str | None, tries: int) -> bool:
        """Whether to send the request again after this 401 or 403: as
        ``auth`` answers the challenge (a source that cannot is told of a
        401 to a credential it gave, and the request goes once more)."""
        if self.auth is None:
            return False
        if isinstance(self.auth, ChallengedSource):
            values = response.headers.get_list("www-authenticate")
            return await self.auth.challenged(response.status_code, values, sent)
        if response.status_code != 401 or sent is None or tries:
            return False
        self.auth.rejected(sent)
        return await self.auth.authorization() not in (None, sent)

    async def _read(self, post: Post, response: httpx.Response) -> Resume | None:
        reply = self.binding.reply(post, response.status_code, response.headers.multi_items())
        async for chunk in response.aiter_bytes():
            await self._dispatch(post, reply.feed(chunk))
            if reply.done:
                break
        await self._dispatch(post, reply.end())
        return reply.resume

    async def _dispatch(self, post: Post, events: list[Event]) -> None:
        for event in events:
            if isinstance(event, ResponseReceived):
                self._answered(event)
            elif isinstance(event, Negotiated):
                if self._negotiated is not None and not self._negotiated.done():
                    self._negotiated.set_result(event)
                    own = self.binding.stream()  # the server's own stream, handshake era
                    if own is not None:
                        self._spawn(self._exchange(own))
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
