"""``subscriptions/listen`` served by a `ServerSession` on its own connection
(stdio, mcp_schema.session.listens), sans-IO: the acknowledgement first,
``subscriptionId`` on every frame, the client's filter enforced, changes
coalesced between two takes, the three ends (the client's
``notifications/cancelled``, the graceful ``complete`` result, the server's
``notifications/cancelled``) and the refusals, which change nothing."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_schema.session import (
    CancelRequested,
    Negotiated,
    ProtocolError,
    RequestReceived,
    ServerSession,
)
from mcp_schema.subscriptions import SUBSCRIPTION_ID_KEY, Subscriptions
from tests.hostile import META

TOOLS = "notifications/tools/list_changed"
PROMPTS = "notifications/prompts/list_changed"
RESOURCES = "notifications/resources/list_changed"
UPDATED = "notifications/resources/updated"
ACK = "notifications/subscriptions/acknowledged"
CAPABILITIES = {"tools": {"listChanged": True}, "resources": {"subscribe": True}, "prompts": {}}
INFO = {"name": "s", "version": "1"}


def server(**options: Any) -> ServerSession:
    return ServerSession(info=INFO, capabilities=CAPABILITIES, **options)


def listen(rid: str | int, **notifications: Any) -> bytes:
    params = {"_meta": META, "notifications": notifications}
    return json.dumps(
        {"jsonrpc": "2.0", "id": rid, "method": "subscriptions/listen", "params": params}
    ).encode()


def cancelled(rid: str | int) -> bytes:
    params = {"requestId": rid, "reason": "done"}
    return json.dumps(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}
    ).encode()


def sent(session: ServerSession) -> list[dict[str, Any]]:
    return [json.loads(frame) for frame in session.data_to_send()]


def of(frame: dict[str, Any]) -> object:
    """The subscription a frame belongs to."""
    return frame.get("params", frame.get("result", {}))["_meta"][SUBSCRIPTION_ID_KEY]


def test_a_listen_is_acknowledged_with_what_the_server_honors_and_nothing_reaches_the_handler() -> (
    None
):
    session = server()
    events = session.receive(listen(1, toolsListChanged=True, promptsListChanged=True))
    assert [type(e) for e in events] == [Negotiated]  # the first request fixed the version
    assert sent(session) == [
        {
            "jsonrpc": "2.0",
            "method": ACK,  # no prompts: the server does not declare prompts.listChanged
            "params": {
                "_meta": {SUBSCRIPTION_ID_KEY: 1},
                "notifications": {"toolsListChanged": True},
            },
        }
    ]
    assert session.in_flight == 1  # the listen request is open until its listen ends
    session.subscriptions.prompts_list_changed()  # not honored: never sent
    session.subscriptions.resources_list_changed()  # not asked for
    assert sent(session) == []


def test_changes_coalesce_between_takes_in_first_publication_order_tagged_with_their_listen() -> (
    None
):
    session = server()
    session.receive(listen("a", toolsListChanged=True, resourceSubscriptions=["file:///x"]))
    session.subscriptions.tools_list_changed()  # published after the listen opened: reaches it
    first = sent(session)
    assert [f["method"] for f in first] == [ACK, TOOLS]  # the acknowledgement first
    session.receive(listen(7, resourceSubscriptions=["file:///x", "file:///y"]))
    for uri in ("file:///y", "file:///x", "file:///y"):
        session.subscriptions.resource_updated(uri)
    session.subscriptions.tools_list_changed()
    session.subscriptions.tools_list_changed()
    got = [(of(f), f["method"], f["params"].get("uri")) for f in sent(session)]
    assert got == [
        ("a", UPDATED, "file:///x"),  # each listen's frames in order, listens in opening order
        ("a", TOOLS, None),
        (7, ACK, None),
        (7, UPDATED, "file:///y"),
        (7, UPDATED, "file:///x"),
    ]


def test_a_change_published_before_a_listen_opens_never_reaches_it() -> None:
    session = server()
    session.subscriptions.tools_list_changed()
    session.receive(listen(1, toolsListChanged=True))
    assert [f["method"] for f in sent(session)] == [ACK]


def test_the_clients_cancel_ends_its_listen_silently_and_frees_the_id() -> None:
    session = server()
    session.receive(listen(1, toolsListChanged=True))
    session.receive(listen(2, toolsListChanged=True))
    sent(session)
    session.subscriptions.tools_list_changed()  # pending for both when 1 is cancelled
    assert (
        session.receive(cancelled(1)) == []
    )  # the handler never saw the listen: no CancelRequested
    assert [(of(f), f["method"]) for f in sent(session)] == [(2, TOOLS)]
    assert (session.in_flight, len(session.subscriptions)) == (1, 1)
    session.receive(listen(1, toolsListChanged=True))  # the id may be used again
    assert [(of(f), f["method"]) for f in sent(session)] == [(1, ACK)]


def test_a_graceful_close_answers_the_listen_request_after_what_was_pending() -> None:
    session = server()
    session.receive(listen(3, toolsListChanged=True))
    session.subscriptions.tools_list_changed()
    session.subscriptions.close()
    session.subscriptions.tools_list_changed()  # closed: reaches nobody
    assert sent(session) == [
        {"jsonrpc": "2.0", "method": ACK, "params": {"_meta": {SUBSCRIPTION_ID_KEY: 3}, "notifications": {"toolsListChanged": True}}},
        {"jsonrpc": "2.0", "method": TOOLS, "params": {"_meta": {SUBSCRIPTION_ID_KEY: 3}}},
        {"jsonrpc": "2.0", "id": 3, "result": {"resultType": "complete", "_meta": {SUBSCRIPTION_ID_KEY: 3}}},
    ]  # fmt: skip
    assert session.in_flight == 0 and sent(session) == []


def test_a_server_that_tears_a_listen_down_sends_notifications_cancelled_naming_it() -> None:
    session = server(subscriptions=Subscriptions(max_queued=1))
    session.receive(listen(4, resourceSubscriptions=["file:///x", "file:///y"]))
    session.receive(listen(5, toolsListChanged=True))
    sent(session)
    session.subscriptions.resource_updated("file:///x")
    session.subscriptions.resource_updated("file:///y")  # a second pending one: 4 fell behind
    frames = sent(session)
    assert frames == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {
                "_meta": {SUBSCRIPTION_ID_KEY: 4},
                "requestId": 4,
                "reason": "the subscription's reader fell behind",
            },
        }
    ]
    assert session.in_flight == 1  # 5 is still open
    session.subscriptions.cancel("shutting down")
    assert [(f["method"], f["params"]["requestId"]) for f in sent(session)] == [
        ("notifications/cancelled", 5)
    ]
    assert session.in_flight == 0


def test_one_registry_shared_by_two_connections_reaches_each_ones_listens_on_its_own_connection() -> (
    None
):
    shared = Subscriptions()
    one, two = server(subscriptions=shared), server(subscriptions=shared)
    one.receive(listen(1, toolsListChanged=True))
    two.receive(listen(1, toolsListChanged=True))  # the same id on another connection
    sent(one), sent(two)
    assert shared.tools_list_changed() == 2
    assert [(of(f), f["method"]) for f in sent(one)] == [(1, TOOLS)]
    one.receive(cancelled(1))
    assert shared.tools_list_changed() == 1
    assert sent(one) == [] and [f["method"] for f in sent(two)] == [TOOLS]  # coalesced


def refused(session: ServerSession, frame: bytes) -> tuple[int, object]:
    (event,) = session.receive(frame)
    assert isinstance(event, ProtocolError)
    (answer,) = sent(session)
    return answer["error"]["code"], answer["id"]


def test_refused_listens_are_answered_with_their_id_and_change_nothing() -> None:
    session = server(subscriptions=Subscriptions(max_listens=1, max_uris=1))
    assert refused(session, listen(1, toolsListChanged="yes")) == (-32602, 1)
    assert refused(session, listen(2, resourceSubscriptions=["a", "b"])) == (-32602, 2)
    assert (session.in_flight, len(session.subscriptions), session.version) == (0, 0, None)
    session.receive(listen(3, toolsListChanged=True))
    sent(session)
    assert refused(session, listen(3, toolsListChanged=True)) == (-32600, 3)  # in flight already
    assert refused(session, listen(4, toolsListChanged=True)) == (-31429, 4)  # max_listens
    assert (session.in_flight, len(session.subscriptions)) == (1, 1)


def test_a_handshake_era_session_has_no_listen() -> None:
    session = server()
    opening = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": INFO}
    session.receive(
        json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": opening})
    )
    sent(session)
    frame = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "subscriptions/listen",
            "params": {"notifications": {}},
        }
    )
    assert refused(session, frame.encode()) == (-32601, 1)
    assert len(session.subscriptions) == 0


def test_listens_false_hands_a_listen_to_the_handler_and_its_cancel_too() -> None:
    session = server(listens=False)
    (request,) = [
        e
        for e in session.receive(listen(1, toolsListChanged=True))
        if not isinstance(e, Negotiated)
    ]
    assert isinstance(request, RequestReceived) and request.method == "subscriptions/listen"
    assert sent(session) == [] and len(session.subscriptions) == 0
    (cancel,) = session.receive(cancelled(1))
    assert isinstance(cancel, CancelRequested) and cancel.request is request


FILTERS = st.fixed_dictionaries(
    {},
    optional={
        "toolsListChanged": st.booleans(),
        "promptsListChanged": st.booleans(),
        "resourcesListChanged": st.booleans(),
        "resourceSubscriptions": st.lists(st.sampled_from(["u:a", "u:b", "u:c"]), max_size=3),
    },
)
CHANGES = st.sampled_from(
    [(TOOLS, None), (PROMPTS, None), (RESOURCES, None), (UPDATED, "u:a"), (UPDATED, "u:b")]
)
STEPS = st.lists(
    st.one_of(CHANGES, st.just("take"), st.tuples(st.just("listen"), FILTERS)), max_size=30
)


def honors(notifications: dict[str, Any], change: tuple[str, str | None]) -> bool:
    """Whether a listen asking for ``notifications`` of a server declaring
    tools.listChanged and resources.subscribe only (as `CAPABILITIES`) gets ``change``."""
    method, uri = change
    if method == UPDATED:
        return uri in notifications.get("resourceSubscriptions", [])
    return method == TOOLS and notifications.get("toolsListChanged", False)


@settings(max_examples=60, deadline=None)
@given(STEPS)
def test_each_listen_gets_exactly_what_it_asked_for_once_per_take_in_order(
    steps: list[Any],
) -> None:
    session = server()
    asked: dict[int, dict[str, Any]] = {}  # each open listen's filter, by its id
    expected: dict[int, list[Any]] = {}  # what each listen should get at the next take
    for step in steps:
        if step == "take":
            got: dict[int, list[Any]] = {rid: [] for rid in asked}
            for frame in sent(session):
                got[of(frame)].append((frame["method"], frame["params"].get("uri")))  # type: ignore[index]
            assert got == expected
            expected = {rid: [] for rid in asked}
        elif step[0] == "listen":
            rid = len(asked)
            asked[rid] = step[1]
            session.receive(listen(rid, **step[1]))
            expected[rid] = [(ACK, None)]
        else:
            for rid, notifications in asked.items():
                if honors(notifications, step) and step not in expected[rid]:
                    expected[rid].append(step)
            session.subscriptions.publish(*step)
