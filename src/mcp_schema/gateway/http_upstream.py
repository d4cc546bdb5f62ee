"""The gateway's HTTP upstream: the client it forwards with
(`upstream_client`: `mcp_schema.http.pool`, its timeouts and bound), the
credentials a request carries there (`Credentials`), and one exchange of
a bridge's `mcp_schema.http.binding.Post` (`exchanged`), for the forward
mode and both bridge directions alike.

Credentials: the client's own ``Authorization`` and
``Proxy-Authorization`` never go upstream (a token is for the server it
was issued to; the specification forbids passing it on), unless
``pass_authorization`` says so; the gateway's own come from a
`mcp_schema.http.credentials.CredentialSource` (``gateway
--upstream-token-env``/``--upstream-token-file``). An upstream's 401 tells
the source (`CredentialSource.rejected`), so that it can get a fresh one;
what the client gets is the gateway's 502, never the upstream's challenge.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from mcp_schema.http.binding import Post, Reply
from mcp_schema.http.credentials import CredentialSource
from mcp_schema.http.h1 import Target, UpstreamUnreachable
from mcp_schema.http.pool import HttpClient, Limits, Timeouts
from mcp_schema.session import Event

__all__ = ["UPSTREAM_LIMITS", "UPSTREAM_TIMEOUTS", "Credentials", "exchanged", "upstream_client"]

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

    __slots__ = ("dropped", "pass_authorization", "source")

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
            raise UpstreamUnreachable(
                f"the gateway has no credentials for the upstream ({type(exc).__name__})"
            ) from None
        return sent

    def answered(self, status: int, sent: str | None) -> None:
        """The upstream's status to a request that carried ``sent``: a 401 rejects it
        (a source failing to hear it is logged, never the request's failure)."""
        if status == 401 and sent is not None and self.source is not None:
            try:
                self.source.rejected(sent)
            except Exception as exc:
                _LOG.warning("the credential source failed on a 401: %s", type(exc).__name__)


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
    the client's own by default). A 401 or 403 reaches the reply without
    its challenge fields."""
    fields: Fields = [
        (name.lower().encode("latin-1"), value.encode("latin-1"))
        for name, value in post.headers
        if name.lower().encode("latin-1") not in _CLIENTS
    ]
    sent = await credentials.added(fields)
    opened = client.stream(post.method, target, fields, post.body, timeouts=timeouts)
    async with opened as response:
        status = response.status
        credentials.answered(status, sent)
        headers = response.headers
        if status in REFUSED:
            headers = [(k, v) for k, v in headers if k != b"www-authenticate"]
        reply = reply_to(status, headers)
        while chunk := await response.receive():
            read(reply.feed(chunk))
            if reply.done:
                break
        read(reply.end())
    return status
