"""`SharedListen`: the one upstream ``subscriptions/listen`` the bridge for
handshake-era clients keeps for all its client sessions (sans-IO; the
`mcp_schema.gateway.bridge.handshake_front.HandshakeFront` drives it).

A listen per client session held one of the upstream's listen slots for as
long as the session lived, so fire-and-forget ``initialize`` requests could
take them all, from every client. The list changes a server offers are the
same for every session (what its discover answer's capabilities offer), so
one listen, in the gateway's own name, hears them for all: each change is
told to every session, on its GET stream, as a handshake-era server tells
it. The listen is opened with the first session, and its driver opens it
again when the upstream ends it while sessions remain.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp_schema.gateway.bridge.handshake import BRIDGED_VERSION
from mcp_schema.gateway.probe import GATEWAY_INFO
from mcp_schema.http.binding import ClientBinding, Post, Reply
from mcp_schema.http_headers import Headers
from mcp_schema.session import ClientSession, Event, Negotiated, NotificationReceived

__all__ = ["CHANGED", "SharedListen", "asked_changes"]

LISTEN = "subscriptions/listen"
_LIST_CHANGES = {
    "toolsListChanged": "tools",
    "promptsListChanged": "prompts",
    "resourcesListChanged": "resources",
}
"""Each list change a listen's filter asks for, by the capability that offers it."""
CHANGED = frozenset(f"notifications/{feature}/list_changed" for feature in _LIST_CHANGES.values())
"""The notifications a listen carries to the client sessions."""


def asked_changes(capabilities: Mapping[str, Any]) -> dict[str, bool]:
    """The listen filter of the list changes ``capabilities`` (a server's,
    2026-07-28 wire form) offer; empty when they offer none."""
    return {
        flag: True
        for flag, feature in _LIST_CHANGES.items()
        if isinstance(capabilities.get(feature), Mapping)
        and capabilities[feature].get("listChanged")
    }


class SharedListen:
    """One listen of the upstream, opened in the gateway's name with
    ``headers``: send each of `posts` (its ``server/discover``, then the
    listen), read each answer with `reply`, and hand its events to `read`,
    which gives the list changes heard. Nothing is sent when the server
    offers no list change (`asked` empty)."""

    def __init__(self, capabilities: Mapping[str, Any], headers: Mapping[str, str]) -> None:
        self.asked = asked_changes(capabilities)
        self.session = ClientSession(info=GATEWAY_INFO, versions=(BRIDGED_VERSION,))
        self.binding = ClientBinding(self.session, "stateless", dict(headers))
        self.listening: int | None = None
        """The id of the listen, once sent."""
        if self.asked:
            self.binding.connect()

    def posts(self) -> list[Post]:
        return [p for p in self.binding.posts() if p.request_id is not None]

    def reply(self, post: Post, status: int, headers: Headers) -> Reply:
        return self.binding.reply(post, status, headers)

    def read(self, events: list[Event]) -> list[str]:
        """The list-changed notifications among ``events``; the listen is
        asked for once the discover answer negotiated."""
        changed: list[str] = []
        for event in events:
            if isinstance(event, Negotiated) and self.listening is None:
                self.listening = self.binding.request(LISTEN, {"notifications": self.asked})
            elif isinstance(event, NotificationReceived) and event.method in CHANGED:
                changed.append(event.method)
        return changed
