"""`mcp_schema.gateway.bridge.shared_listen.SharedListen`, sans-IO, against
the package's own endpoint: its discover, then its listen for the list
changes the server offers, and the changes it hears; nothing sent when the
server offers none."""

from __future__ import annotations

from mcp_schema.gateway.bridge.handshake import BRIDGED_VERSION
from mcp_schema.gateway.bridge.shared_listen import SharedListen, asked_changes
from mcp_schema.http import Endpoint
from mcp_schema.session import ServerSession
from mcp_schema.subscriptions import Subscriptions, supported_by

CAPABILITIES = {"tools": {"listChanged": True}, "prompts": {}}


def test_the_listen_asks_for_what_the_server_offers_and_hears_its_changes() -> None:
    subscriptions = Subscriptions(supported=supported_by(CAPABILITIES))

    def serve(session: ServerSession, event: object) -> None:
        return None

    up = Endpoint(
        serve,
        info={"name": "up", "version": "1"},
        capabilities=CAPABILITIES,
        versions=[BRIDGED_VERSION],
        handler_version=BRIDGED_VERSION,
        subscriptions=subscriptions,
    )
    listen = SharedListen(CAPABILITIES, {"x-gateway": "1"})
    assert listen.asked == {"toolsListChanged": True}
    (discover,) = listen.posts()
    answered = up.handle(discover.method, "/mcp", list(discover.headers), discover.body)
    reply = listen.reply(discover, answered.status, answered.headers)
    assert listen.read(reply.feed(answered.body) + reply.end()) == []
    (post,) = listen.posts()
    assert post.request_id == listen.listening and b'"toolsListChanged":true' in post.body
    assert dict(post.headers)["x-gateway"] == "1"
    response = up.handle(post.method, "/mcp", list(post.headers), post.body)
    assert response.stream is not None
    reply = listen.reply(post, response.status, response.headers)
    assert listen.read(reply.feed(response.stream.take())) == []  # the acknowledgement
    subscriptions.tools_list_changed()
    assert listen.read(reply.feed(response.stream.take())) == ["notifications/tools/list_changed"]


def test_a_server_offering_no_list_change_is_sent_nothing() -> None:
    assert asked_changes({"tools": {}, "resources": {"listChanged": False}}) == {}
    assert SharedListen({"tools": {}}, {}).posts() == []
