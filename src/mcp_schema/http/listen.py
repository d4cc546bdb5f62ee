"""``subscriptions/listen`` over Streamable HTTP: the listen's response is
a long-lived event stream (`ListenStream`) of its
`mcp_schema.subscriptions.Listen`.

The stream takes the listen's frames when the adapter takes its own, so
changes published while the client is behind coalesce there (the
subscriptions module's rule) rather than queue as frames. The client
closing the stream (`Stream.abandon`, also when it overflows) cancels the
listen; the listen ending on the server's side (`Listen.close` at
shutdown, `Listen.cancel`) writes its last frame and ends the stream.
"""

from __future__ import annotations

from mcp_schema.http.stream import MAX_BUFFER, Stream
from mcp_schema.session import RequestReceived
from mcp_schema.subscriptions import LISTEN, Listen, Subscriptions
from mcp_schema.tasks.notifications import open_listen as opened

__all__ = ["LISTEN", "ListenStream", "open_listen"]


class ListenStream(Stream):
    """The event stream of ``listen``."""

    def __init__(self, listen: Listen, *, max_buffer: int = MAX_BUFFER) -> None:
        super().__init__(max_buffer=max_buffer, on_abandon=lambda _: listen.abandon())
        self.listen = listen
        listen.on_ready = self._ready

    def take_frames(self) -> list[bytes]:
        for frame in self.listen.take():
            self.put(frame)  # may overflow: the listen is abandoned, nothing is sent
        if self.listen.done:
            self.finish()
        return super().take_frames()


def open_listen(
    subscriptions: Subscriptions,
    request: RequestReceived,
    *,
    max_buffer: int = MAX_BUFFER,
    principal: str | None = None,
    key: str | None = None,
) -> ListenStream:
    """The stream of a new listen for ``request`` (a ``subscriptions/listen``;
    of ``principal``'s tasks, in the share of ``key``); raises its `McpError`
    when it is refused (`mcp_schema.tasks.notifications.open_listen`)."""
    listen = opened(subscriptions, request, principal, key)
    return ListenStream(listen, max_buffer=max_buffer)
