"""Shares (`mcp_schema.shares`) of the tables a client fills over HTTP: the
`Share` counter itself (a Hypothesis property against a model), then each
flood of one client, whose other clients are unaffected: ``initialize``
requests filling the session table, listens, stateless-era requests whose
answer is awaited; idle sessions expiring; and the caller an `App` makes of
the ASGI scope's client address."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_schema.http import Endpoint, MemorySessions, Response
from mcp_schema.http.asgi import App, Message
from mcp_schema.http.caller import Caller
from mcp_schema.session import Event, RequestReceived, ServerSession
from mcp_schema.shares import SHARE_EXCEEDED, Share, ShareExceededError
from tests.http.test_binding import BASE, INIT, call, endpoint
from tests.http.test_subscriptions import HEADERS, listen_body
from tests.http.test_subscriptions import endpoint as listening

ALICE, BOB = Caller(address="192.0.2.1"), Caller(address="192.0.2.2")
CAROL = Caller(principal="carol", address="192.0.2.1")  # behind Alice's address


# -- the counter ------------------------------------------------------------------------

KEYS = st.sampled_from([None, "a", "b", "c"])
OPS = st.lists(st.tuples(st.sampled_from(["acquire", "release"]), KEYS), max_size=80)


@settings(max_examples=300, deadline=None)
@given(total=st.integers(1, 12), per_key=st.integers(1, 12), ops=OPS)
def test_a_share_keeps_both_bounds_and_a_failed_acquire_changes_nothing(
    total: int, per_key: int, ops: list[tuple[str, str | None]]
) -> None:
    per_key = min(per_key, total)
    share = Share("things", total=total, per_key=per_key)
    model: Counter[str | None] = Counter()
    for op, key in ops:
        before = (len(share), {k: share.held(k) for k in ("a", "b", "c")}, share.keys())
        if op == "acquire":
            room = sum(model.values()) < total and (key is None or model[key] < per_key)
            assert share.acquire(key) is room
            if room:
                model[key] += 1
            else:  # refused: exactly as it was
                assert (len(share), {k: share.held(k) for k in "abc"}, share.keys()) == before
        else:
            share.release(key)
            if model[key]:
                model[key] -= 1
        assert len(share) == sum(model.values()) <= total
        for k in ("a", "b", "c"):
            assert share.held(k) == model[k] <= per_key
        assert share.keys() == sum(1 for k in ("a", "b", "c") if model[k])


@settings(max_examples=200, deadline=None)
@given(total=st.integers(1, 12), ops=st.lists(KEYS, max_size=30), key=KEYS)
def test_a_release_restores_exactly_what_its_acquire_changed(
    total: int, ops: list[str | None], key: str | None
) -> None:
    share = Share("things", total=total, per_key=max(1, total // 2))
    for k in ops:
        share.acquire(k)
    before = (len(share), [share.held(k) for k in "abc"], share.keys())
    if share.acquire(key):
        share.release(key)
    assert (len(share), [share.held(k) for k in "abc"], share.keys()) == before


def test_a_refusal_says_which_bound_and_never_names_the_key() -> None:
    share = Share("sessions", total=3, per_key=2)
    assert share.acquire("principal alice") and share.acquire("principal alice")
    mine = share.refused("principal alice")
    assert "this client holds 2 sessions" in mine.message and "alice" not in mine.message
    assert share.acquire("principal bob")
    full = share.refused("principal carol")
    assert "the server holds 3 sessions" in full.message
    assert full.to_error_object() == {
        "code": SHARE_EXCEEDED,
        "message": full.message,
        "data": {"table": "sessions", "retryAfter": 5},
    }
    with pytest.raises(ShareExceededError):
        share.take("principal carol")


@pytest.mark.parametrize(("total", "per_key"), [(0, 1), (2, 3), (True, 1), (5, 0)])
def test_a_share_is_checked_when_it_is_built(total: Any, per_key: Any) -> None:
    with pytest.raises((TypeError, ValueError)):
        Share("things", total=total, per_key=per_key)


# -- sessions ---------------------------------------------------------------------------


def initialize(ep: Endpoint, caller: Caller, rid: int = 0) -> Response:
    body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": INIT})
    return ep.handle("POST", "/mcp", BASE, body.encode(), caller=caller)


def listed(ep: Endpoint, session: str, caller: Caller) -> int:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {**BASE, "mcp-session-id": session}
    return ep.handle("POST", "/mcp", headers, json.dumps(message).encode(), caller=caller).status


def test_a_flood_of_initialize_leaves_every_other_clients_session_alive() -> None:
    ep = endpoint()  # the default bounds: 10,000 sessions, 1,000 per caller
    bobs = initialize(ep, BOB).header("mcp-session-id")
    assert bobs is not None
    answers = Counter(initialize(ep, ALICE, n).status for n in range(1_200))
    assert answers == {200: 1_000, 429: 200}
    refused = initialize(ep, ALICE, 77)
    assert refused.status == 429 and refused.header("retry-after") == "5"
    assert json.loads(refused.body)["id"] == 77
    assert json.loads(refused.body)["error"]["code"] == SHARE_EXCEEDED
    assert listed(ep, bobs, BOB) == 200  # nothing of Bob's was pushed out
    assert initialize(ep, BOB).status == 200  # and Bob still gets new ones
    assert initialize(ep, CAROL).status == 200  # a principal counts apart from its address
    assert len(ep.sessions) == 1_003  # type: ignore[arg-type]


def test_a_session_ended_gives_its_place_back() -> None:
    ep = endpoint(sessions=MemorySessions(max_sessions=10, max_per_key=2))
    first = initialize(ep, ALICE).header("mcp-session-id")
    assert initialize(ep, ALICE).status == 200 and initialize(ep, ALICE).status == 429
    assert first is not None
    assert ep.handle("DELETE", "/mcp", {"mcp-session-id": first}).status == 200
    assert initialize(ep, ALICE).status == 200


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_an_idle_session_expires_and_one_at_work_does_not() -> None:
    clock = Clock()
    store = MemorySessions(max_sessions=10, max_per_key=2, idle_seconds=60, clock=clock)
    ep = endpoint(sessions=store)
    idle = initialize(ep, ALICE).header("mcp-session-id")
    busy = initialize(ep, ALICE).header("mcp-session-id")
    assert idle is not None and busy is not None
    get = {"mcp-session-id": busy, "accept": "text/event-stream"}
    listener = ep.handle("GET", "/mcp", get)  # an open GET stream: the session is at work
    assert listener.status == 200
    clock.now = 59
    assert initialize(ep, ALICE).status == 429  # nothing idle long enough yet
    clock.now = 61
    assert initialize(ep, ALICE).status == 200  # the idle one expired to make room
    assert listed(ep, idle, ALICE) == 404
    assert listed(ep, busy, ALICE) == 200


def test_an_expired_sessions_record_is_deleted_across_replicas() -> None:
    from mcp_schema.broker import InProcessBroker
    from mcp_schema.http.shared_sessions import BrokerSessions

    async def test() -> None:
        clock = Clock()
        store = BrokerSessions(InProcessBroker(), replica="r1", idle_seconds=60, clock=clock)
        ep = endpoint(sessions=store)
        session = initialize(ep, ALICE).header("mcp-session-id")
        assert session is not None
        await store.flush()
        assert await store.holder(session) == "r1"
        clock.now = 61
        assert listed(ep, session, ALICE) == 404  # expired
        await store.flush()
        assert await store.holder(session) is None and store.share.held(ALICE.key) == 0

    asyncio.run(test())


# -- listens ----------------------------------------------------------------------------


def listen(ep: Endpoint, caller: Caller, rid: int | str) -> Response:
    body = json.dumps(listen_body(rid, {"toolsListChanged": True})).encode()
    return ep.handle("POST", "/mcp", HEADERS, body, caller=caller)


def test_a_flood_of_listens_leaves_room_for_another_client() -> None:
    from mcp_schema.subscriptions import Subscriptions

    ep = listening(subscriptions=Subscriptions(max_listens=1_024))  # per caller: 102
    opened = [listen(ep, ALICE, n) for n in range(102)]
    assert all(r.status == 200 and r.stream is not None for r in opened)
    refused = listen(ep, ALICE, "one more")
    assert refused.status == 429 and refused.header("retry-after") == "5"
    assert json.loads(refused.body)["id"] == "one more"
    assert listen(ep, BOB, 1).status == 200  # Bob's listen opens
    assert opened[0].stream is not None
    opened[0].stream.abandon()  # one of Alice's ends: her share has room again
    assert listen(ep, ALICE, "again").status == 200
    assert len(ep.subscriptions) == 103


# -- answers awaited --------------------------------------------------------------------


async def forever(session: ServerSession, event: Event) -> None:
    if isinstance(event, RequestReceived):
        await asyncio.Event().wait()


def test_a_flood_of_awaited_requests_leaves_room_for_another_client() -> None:
    async def test() -> None:
        ep = Endpoint(forever, info={"name": "t", "version": "1"}, capabilities={"tools": {}})
        held = [post_as(ep, ALICE, n) for n in range(100)]  # per caller: 100 of 1,000
        assert all(r.stream is not None and not r.stream.finished for r in held)
        assert ep.waiting == 100
        refused = ep.settled(post_as(ep, ALICE, 100))
        assert refused.status == 429 and refused.header("retry-after") == "5"
        assert json.loads(refused.body)["id"] == 100
        bobs = post_as(ep, BOB, 1)
        assert bobs.stream is not None and not bobs.stream.finished and ep.waiting == 101
        await ep.aclose()

    asyncio.run(test())


def post_as(ep: Endpoint, caller: Caller, rid: int) -> Response:
    from mcp_schema.http_headers import request_headers

    message = call("echo", rid)
    headers = {**BASE, **request_headers(message)}
    return ep.handle("POST", "/mcp", headers, json.dumps(message).encode(), caller=caller)


# -- the caller of an ASGI request --------------------------------------------------------


async def asgi_initialize(app: App, client: tuple[str, int] | None) -> int:
    body = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT})
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "headers": [(k.encode(), v.encode()) for k, v in {**BASE, "host": "localhost"}.items()],
        "server": ("127.0.0.1", 8000),
        "client": client,
    }
    sent: list[Message] = []
    chunks = [{"type": "http.request", "body": body.encode(), "more_body": False}]

    async def receive() -> Message:
        if chunks:
            return chunks.pop()
        await asyncio.Event().wait()
        raise AssertionError

    async def send(message: Message) -> None:
        sent.append(message)

    await asyncio.wait_for(app(scope, receive, send), 10)
    status: int = sent[0]["status"]
    return status


def test_the_app_counts_by_the_scopes_client_address_or_the_principal() -> None:
    async def test() -> None:
        sessions = MemorySessions(max_sessions=10, max_per_key=1)
        app = App(endpoint(sessions=sessions))
        assert await asgi_initialize(app, ("192.0.2.1", 5000)) == 200
        assert await asgi_initialize(app, ("192.0.2.1", 5001)) == 429  # same address
        assert await asgi_initialize(app, ("192.0.2.2", 5000)) == 200
        named = MemorySessions(max_sessions=10, max_per_key=1)
        hooked = App(endpoint(sessions=named, principal=lambda headers: "dana"))
        assert await asgi_initialize(hooked, ("192.0.2.1", 1)) == 200
        assert await asgi_initialize(hooked, ("192.0.2.9", 1)) == 429  # same principal
        assert named.share.held("principal dana") == 1

    asyncio.run(test())
