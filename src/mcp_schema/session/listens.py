"""``subscriptions/listen`` served on a session's own connection (stdio),
where every listen shares the one channel and its frames are told apart by
``io.modelcontextprotocol/subscriptionId`` (the specification's
[Subscriptions](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions)
page), and the opening of a listen for every transport (`open_listen`).

The listens themselves are `mcp_schema.subscriptions`' (the same
`Listen` as over HTTP, where each is a stream of its own): this module only
keeps which of them the connection opened, by the request that opened
each, and takes their frames when the session's are taken
(`ServerSession.frames_to_send`), so that changes published between two
takes coalesce as the subscriptions module says. The listen request stays
in flight until its listen ends: its ``complete`` result (`Listen.close`)
or the server's ``notifications/cancelled`` (`Listen.cancel`) is its
answer; the client's ``notifications/cancelled`` for it abandons it.
"""

from __future__ import annotations

from mcp_schema.session.events import RequestReceived
from mcp_schema.session.extensions import declares_extension, missing_extension
from mcp_schema.session.frames import Frame
from mcp_schema.subscriptions import TASKS, Listen, Subscriptions, listened
from mcp_schema.versions import TASKS_EXTENSION

__all__ = ["Listens", "open_listen"]


def open_listen(
    subscriptions: Subscriptions,
    request: RequestReceived,
    principal: str | None,
    key: str | None = None,
) -> Listen:
    """The listen ``request`` (a ``subscriptions/listen``) opens in
    ``subscriptions``, hearing of ``principal``'s tasks, in the share of
    ``key`` (the caller's); its `McpError` when refused (-32602, -31429, and
    -32021 for ``taskIds`` from a client that did not declare the Tasks
    extension, when ``subscriptions`` send task status), nothing opened."""
    asked = subscriptions.filter_of(listened(request.message))
    sends = TASKS in subscriptions.supported
    declared = declares_extension(request.context.client_capabilities, TASKS_EXTENSION)
    if asked.task_ids and sends and not declared:
        raise missing_extension(TASKS, TASKS_EXTENSION)
    return subscriptions.open(request.id, asked, principal=principal or "", key=key)


class Listens:
    """The listens open on one connection, in ``subscriptions``, hearing of
    ``principal``'s tasks."""

    def __init__(self, subscriptions: Subscriptions, principal: str | None = None) -> None:
        self.subscriptions = subscriptions
        self.principal = principal
        self._open: dict[RequestReceived, Listen] = {}  # by identity, in the order opened

    def __len__(self) -> int:
        return len(self._open)

    def open(self, request: RequestReceived) -> None:
        """A listen for ``request`` (a ``subscriptions/listen``), its
        acknowledgement queued; its `McpError` (-32602, -32603, -32021) when
        it is refused, nothing changed."""
        self._open[request] = open_listen(self.subscriptions, request, self.principal)

    def abandon(self, request: RequestReceived) -> bool:
        """The client cancelled ``request``: whether it was a listen (now ended, silently)."""
        listen = self._open.pop(request, None)
        if listen is None:
            return False
        listen.abandon()
        return True

    def take(self) -> tuple[list[Frame], list[RequestReceived]]:
        """The frames of every listen, in the order the listens were opened,
        and the requests whose listen is over (answered by its last frame)."""
        frames: list[Frame] = []
        ended: list[RequestReceived] = []
        for request, listen in list(self._open.items()):
            rid = request.id
            for data, method in listen.take_sent():
                frames.append(Frame(data, method, rid if method is None else None, rid))
            if listen.done:
                del self._open[request]
                ended.append(request)
        return frames, ended
