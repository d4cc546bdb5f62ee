"""The gateway's HTTP upstream: the client it forwards with
(`upstream_client`: `mcp_schema.http.pool`, its timeouts and bound), the
credentials a request carries there (`Credentials`), a forwarded
request's answer (`opened`) and one exchange of a bridge's
`mcp_schema.http.binding.Post` (`exchanged`), for the forward mode and
both bridge directions alike.

Credentials: the client's own ``Authorization`` and
``Proxy-Authorization`` never go upstream (a token is for the server it
was issued to; the specification forbids passing it on), unless
``pass_authorization`` says so; the gateway's own come from a
`mcp_schema.http.credentials.CredentialSource`: a static token (``gateway
--upstream-token-env``/``--upstream-token-file``) or an OAuth client of
its own (`mcp_schema.oauth.OAuth`, ``--upstream-client-id``). An
upstream's 401 (or a 403 ``insufficient_scope``, for a source that answers
challenges) is answered by the source (`Credentials.again`) and a request
whose body is whole goes once more with the fresh credential; what the
client gets otherwise is the gateway's 502, never the upstream's challenge.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable

from mcp_schema.errors import McpError, clip
from mcp_schema.http.binding import Post, Reply
from mcp_schema.http.credentials import ChallengedSource, CredentialSource
from mcp_schema.http.h1 import Target, UpstreamUnreachable
from mcp_schema.http.pool import HttpClient, Limits, StreamedResponse, Timeouts
from mcp_schema.session import Event

__all__ = [
    "UPSTREAM_LIMITS",
    "UPSTREAM_TIMEOUTS",
    "Credentials",
    "exchanged",
    "opened",
    "upstream_client",
]

UPSTREAM_TIMEOUTS = Timeouts(connect=10.0, read=300.0, idle=4.0, pool=10.0)
"""The gateway's: an answer's head within 5 minutes (a tool call may take
that long), and no event stream silent longer (its client listens again)."""
UPSTREAM_LIMITS = Limits(max_connections=1024)
"""At most as many upstream connections as the example server's listen slots."""

_LOG = logging.getLogger("mcp_schema.gateway")

REFUSED = (401, 403)
"""An upstream's answers about the gateway's own credentials: never relayed."""

_CLIENTS = frozenset([b"authorization", b"proxy-authorization"])
Fields = list[tuple[bytes, bytes]]


def upstream_client(timeouts: Timeouts | None = None) -> HttpClient:
    """The gateway's client of its upstream (``timeouts``: `UPSTREAM_TIMEOUTS` by default)."""
    return HttpClient(timeouts=timeouts or UPSTREAM_TIMEOUTS, limits=UPSTREAM_LIMITS)


class Credentials:
    """What a request carries upstream for authorization: ``source``'s
    ``Authorization`` (None: none of the gateway's own), and the client's
    own fields only when ``pass_authorization``."""

    __slots__ = ("_challenged", "dropped", "pass_authorization", "source")

    def __init__(
        self, source: CredentialSource | None = None, *, pass_authorization: bool = False
    ) -> None:
        if source is not None and not isinstance(source, CredentialSource):
            raise TypeError(f"credentials must be a CredentialSource, not {type(source).__name__}")
        if source is not None and pass_authorization:
            raise ValueError("give the gateway's own credentials or pass the client's, not both")
        self.source, self.pass_authorization = source, bool(pass_authorization)
        self.dropped: frozenset[bytes] = frozenset() if pass_authorization else _CLIENTS
        """The client's fields never forwarded."""
        # Decided once: a runtime protocol check costs too much per request.
        self._challenged = source if isinstance(source, ChallengedSource) else None

    async def added(self, fields: Fields) -> str | None:
        """``fields`` with the source's ``Authorization`` appended; the value
        sent (or None). A source that fails (or gives what is no header
        value) fails the request: `UpstreamUnreachable`, naming no token."""
        if self.source is None:
            return None
        try:
            sent = await self.source.authorization()
            if sent is not None:
                fields.append((b"authorization", sent.encode("latin-1")))
        except Exception as exc:  # the operator's hook: whatever it raises, the request fails
            raise _failed(exc) from None
        return sent

    def answered(self, status: int, sent: str | None) -> None:
        """The upstream's status to a request that carried ``sent``: a 401 rejects it
        (a source failing to hear it is logged, never the request's failure);
        another answer settles a challenged source's count of attempts."""
        if sent is None or self.source is None:
            return
        try:
            if status == 401:
                self.source.rejected(sent)
            elif self._challenged is not None and status != 403:
                self._challenged.settled()
        except Exception as exc:
            _LOG.warning("the credential source failed on HTTP %d: %s", status, type(exc).__name__)

    async def again(self, status: int, headers: Fields, sent: str | None) -> bool:
        """Whether a request refused with ``status`` (401 or 403, its
        ``headers``' challenge) goes once more with a fresh credential: as
        the source answers the challenge, or, for one that cannot, when it
        has another after a 401 (`UpstreamUnreachable` when it fails)."""
        if self.source is None:
            return False
        try:
            if self._challenged is not None:
                said = [v.decode("latin-1") for k, v in headers if k == b"www-authenticate"]
                return await self._challenged.challenged(status, said, sent)
            if status != 401 or sent is None:
                return False
            self.source.rejected(sent)
            return await self.source.authorization() not in (None, sent)
        except Exception as exc:
            raise _failed(exc) from None


def _failed(exc: Exception) -> UpstreamUnreachable:
    """The request's failure when the source failed: the operator's log says
    why (a typed error's message names no secret), the client only its kind."""
    if isinstance(exc, McpError):
        _LOG.warning("no credentials for the upstream: %s", clip(exc.message, 300))
    return UpstreamUnreachable(
        f"the gateway has no credentials for the upstream ({type(exc).__name__})"
    )


def opened(
    client: HttpClient,
    credentials: Credentials,
    method: str,
    target: Target,
    headers: Fields,
    content: bytes | AsyncIterator[bytes],
) -> Awaitable[StreamedResponse]:
    """The upstream's answer to a forwarded request, its head come. A 401
    or 403 is about the gateway's credentials, never the client's to see:
    answered by them (`Credentials.again`) and sent once more with a fresh
    one when the body is whole (a streamed one is gone), else
    `UpstreamUnreachable`."""
    if credentials.source is None:  # nothing added, nothing renewed: the client's open itself
        return _refusing(client.open(method, target, headers, content))
    return _credited(client, credentials, method, target, headers, content)


async def _refusing(opening: Awaitable[StreamedResponse]) -> StreamedResponse:
    """The answer ``opening`` gives, a 401 or 403 `UpstreamUnreachable`
    (no credentials of the gateway's own to renew)."""
    response = await opening
    status = response.status
    if status in REFUSED:
        await response.aclose()
        raise UpstreamUnreachable(f"it refused the gateway's credentials (HTTP {status})")
    return response


async def _credited(
    client: HttpClient,
    credentials: Credentials,
    method: str,
    target: Target,
    headers: Fields,
    content: bytes | AsyncIterator[bytes],
) -> StreamedResponse:
    """`opened` with the gateway's own credentials."""
    retry = isinstance(content, bytes)
    for last in (False, True) if retry else (True,):
        sending = list(headers)
        sent = await credentials.added(sending)
        response = await client.open(method, target, sending, content)
        status = response.status
        if status not in REFUSED:
            credentials.answered(status, sent)
            return response
        refused = response.headers
        await response.aclose()
        if last or not await credentials.again(status, refused, sent):
            credentials.answered(status, sent)
            raise UpstreamUnreachable(f"it refused the gateway's credentials (HTTP {status})")
    raise AssertionError("unreachable: the last try answers or raises")


async def exchanged(
    client: HttpClient,
    target: Target,
    post: Post,
    reply_to: Callable[[int, Fields], Reply],
    read: Callable[[list[Event]], object],
    credentials: Credentials,
    timeouts: Timeouts | None = None,
) -> int:
    """``post`` sent to ``target`` (with ``credentials``), its answer read as
    it comes by the `Reply` ``reply_to`` makes of its status and headers,
    each chunk's events to ``read``, until the answer came or the body
    ended; the status (`mcp_schema.http.h1.UpstreamError` raised; ``timeouts``:
    the client's own by default). A 401 or 403 is answered by the
    credentials (`Credentials.again`: sent once more with a fresh one), else
    reaches the reply without its challenge fields."""
    fields: Fields = [
        (name.lower().encode("latin-1"), value.encode("latin-1"))
        for name, value in post.headers
        if name.lower().encode("latin-1") not in _CLIENTS
    ]
    for last in (False, True):  # a refused credential: once more with a fresh one
        sending = list(fields)
        sent = await credentials.added(sending)
        opened = client.stream(post.method, target, sending, post.body, timeouts=timeouts)
        async with opened as response:
            status, headers = response.status, response.headers
            if status not in REFUSED or last or credentials.source is None:
                credentials.answered(status, sent)
                return await _relayed(response, status, headers, reply_to, read)
        if not await credentials.again(status, headers, sent):
            credentials.answered(status, sent)
            return await _relayed(None, status, headers, reply_to, read)
    raise AssertionError("unreachable: the last try relays its answer")


async def _relayed(
    response: StreamedResponse | None,
    status: int,
    headers: Fields,
    reply_to: Callable[[int, Fields], Reply],
    read: Callable[[list[Event]], object],
) -> int:
    """The answer to the reply (a 401 or 403 without its challenge fields;
    None: its body unread), each chunk's events to ``read``; its status."""
    if status in REFUSED:
        headers = [(k, v) for k, v in headers if k != b"www-authenticate"]
    reply = reply_to(status, headers)
    while response is not None and (chunk := await response.receive()):
        read(reply.feed(chunk))
        if reply.done:
            break
    read(reply.end())
    return status
